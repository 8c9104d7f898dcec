/**
 * The parts of a message beyond its text: files (images, documents) a person sends or a tool
 * returns, and a model's reasoning, kept for the provider that made it.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import { JsonValue } from "./Json.js"

const base64Pattern = /^[A-Za-z0-9+/]*={0,2}$/

/** Standard base64, padded or not; checked without quoting the value (it may be megabytes). */
const Base64 = Schema.String.check(Schema.makeFilter((data) =>
  (base64Pattern.test(data) && data.length % 4 !== 1) || "expected base64 (A–Z, a–z, 0–9, + and /, then = padding), without a data: prefix"
))

/** An absolute URL the provider fetches; a `data:` URL is inline data: its base64 belongs in `Base64`. */
const Url = Schema.String.check(Schema.makeFilter((url) =>
  /^data:/i.test(url)
    ? "a data: URL is inline data: give its base64 as a Base64 source (Part.file takes a data: URL and does so)"
    : URL.canParse(url) || "expected an absolute URL (https://…)"
))

/** `type/subtype`, as in a `Content-Type` header without its parameters. */
const MediaType = Schema.String.check(Schema.makeFilter((type) =>
  /^[\w.+-]+\/[\w.+*-]+$/.test(type) || "expected a media type: type/subtype, e.g. image/png or application/pdf"
))

/**
 * Where a file's bytes are: at a URL the provider fetches (`Url`), or inline as base64
 * (`Base64`, held to the agent's `limits.fileBytes`).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Part } from "@agentfx/core"
 *
 * Schema.decodeUnknownSync(Part.FileSource)({ _tag: "Url", url: "https://example.com/cat.png" })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const FileSource = Schema.Union([
  Schema.TaggedStruct("Url", { url: Url }),
  Schema.TaggedStruct("Base64", { data: Base64 })
])

/**
 * @since 0.1.0
 * @category models
 */
export type FileSource = typeof FileSource.Type

/**
 * A file: an image (`image/*` media types) or a document, by URL or inline. `name` is the
 * file's name, when it has one (providers show it to the model, or require one for
 * documents). Each adapter sends it in its API's own shape, or describes it in text when the
 * API cannot take it (`docs/providers.md`).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Part } from "@agentfx/core"
 *
 * Schema.decodeUnknownSync(Part.FilePart)({
 *   _tag: "File",
 *   mediaType: "application/pdf",
 *   name: "report.pdf",
 *   source: { _tag: "Base64", data: "JVBERi0xLjQK" }
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const FilePart = Schema.TaggedStruct("File", {
  mediaType: MediaType,
  name: Schema.optionalKey(Schema.String),
  source: FileSource
}).annotate({ identifier: "FilePart" })

/**
 * @since 0.1.0
 * @category models
 */
export interface FilePart extends Schema.Schema.Type<typeof FilePart> {}

/**
 * A piece of text.
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * const part: Part.TextPart = { _tag: "Text", text: "What is in this picture?" }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const TextPart = Schema.TaggedStruct("Text", { text: Schema.String }).annotate({ identifier: "TextPart" })

/**
 * @since 0.1.0
 * @category models
 */
export interface TextPart extends Schema.Schema.Type<typeof TextPart> {}

/**
 * A part of what a person says: text or a file, in the order given (`Agent.run({ input })`).
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * const input: ReadonlyArray<Part.InputPart> = [
 *   Part.text("What is in this picture?"),
 *   Part.image({ url: "https://example.com/cat.png" })
 * ]
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const InputPart = Schema.Union([TextPart, FilePart])

/**
 * @since 0.1.0
 * @category models
 */
export type InputPart = TextPart | FilePart

/**
 * A model's reasoning, as its provider returned it: Anthropic's thinking blocks (with their
 * signatures) and redacted thinking, OpenAI's encrypted reasoning items. `data` is the
 * provider's own value, kept opaque and sent back only to the provider named by `provider`
 * (the adapter's `gen_ai.provider.name`, e.g. `"anthropic"`, `"openai"`): never to another one,
 * as after a fallback to another model. `text` is what the model showed of it (a summary, the
 * thinking), empty when it is hidden.
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * const thinking: Part.ReasoningPart = {
 *   _tag: "Reasoning",
 *   provider: "anthropic",
 *   text: "The user wants the weather…",
 *   data: { type: "thinking", thinking: "The user wants the weather…", signature: "EqQBCgIYAhIM…" }
 * }
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ReasoningPart = Schema.TaggedStruct("Reasoning", {
  provider: Schema.String,
  text: Schema.String,
  data: JsonValue
}).annotate({ identifier: "ReasoningPart" })

/**
 * @since 0.1.0
 * @category models
 */
export interface ReasoningPart extends Schema.Schema.Type<typeof ReasoningPart> {}

/**
 * A text part.
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * Part.text("hello") // { _tag: "Text", text: "hello" }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string): TextPart => ({ _tag: "Text", text })

/**
 * What {@link file} takes: the media type, a name if the file has one, and its bytes (a
 * `Uint8Array`, or base64) or its URL (a `data:` URL is taken apart into inline base64).
 *
 * @since 0.1.0
 * @category models
 */
export type FileInput =
  & { readonly mediaType: string; readonly name?: string }
  & ({ readonly data: string | Uint8Array } | { readonly url: string | URL })

/**
 * A file part. Bytes are kept as base64; a `data:` URL becomes inline base64 too (its own
 * media type is ignored: `mediaType` says what the file is). Not checked here: decoding with
 * {@link FilePart}, and `Agent.run`, check it.
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * const pdf = Part.file({ mediaType: "application/pdf", name: "report.pdf", data: new Uint8Array([37, 80, 68, 70]) })
 * const linked = Part.file({ mediaType: "application/pdf", url: "https://example.com/report.pdf" })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const file = (input: FileInput): FilePart => ({
  _tag: "File",
  mediaType: input.mediaType,
  ...(input.name === undefined ? {} : { name: input.name }),
  source: "data" in input ? { _tag: "Base64", data: base64Of(input.data) } : sourceOfUrl(String(input.url))
})

const base64Of = (data: string | Uint8Array) => typeof data === "string" ? data : Buffer.from(data).toString("base64")

const sourceOfUrl = (url: string): FileSource => {
  const inline = /^data:[^,]*;base64,/i.exec(url)
  return inline === null ? { _tag: "Url", url } : { _tag: "Base64", data: url.slice(inline[0].length) }
}

/**
 * An image part: {@link file} whose `mediaType`, when not given, is the one its bytes start
 * with (PNG, JPEG, GIF, WebP), else `image/*` (for a URL, or bytes of another kind).
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * const cat = Part.image({ url: "https://example.com/cat.png" }) // mediaType "image/*"
 * Part.image({ data: "iVBORw0KGgo=" }).mediaType // "image/png"
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const image = (
  input: { readonly mediaType?: string; readonly name?: string } & ({ readonly data: string | Uint8Array } | { readonly url: string | URL })
): FilePart => {
  const part = file({ ...input, mediaType: input.mediaType ?? "image/*" } as FileInput)
  return input.mediaType === undefined && part.source._tag === "Base64" ? { ...part, mediaType: imageType(part.source.data) } : part
}

/** The image type inline base64 starts with (its magic number), else `image/*`. */
const imageType = (base64: string): string => {
  const head = Buffer.from(base64.slice(0, 16), "base64")
  const ascii = (from: number, to: number) => head.subarray(from, to).toString("latin1")
  return ascii(1, 4) === "PNG"
    ? "image/png"
    : head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff
    ? "image/jpeg"
    : ascii(0, 4) === "GIF8"
    ? "image/gif"
    : ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP"
    ? "image/webp"
    : "image/*"
}

/**
 * How many bytes a file holds inline (what `limits.fileBytes` bounds): the length its base64
 * decodes to; 0 for a file by URL.
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * Part.inlineBytes(Part.file({ mediaType: "text/plain", data: "aGVsbG8=" })) // 5
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const inlineBytes = (file: FilePart): number => {
  if (file.source._tag === "Url") return 0
  const data = file.source.data
  const padding = data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0
  return Math.floor((data.length * 3) / 4) - padding
}

/**
 * A file's URL: its own, or a `data:` URL of its inline bytes (what browsers and several APIs
 * take).
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * Part.url(Part.file({ mediaType: "text/plain", data: "aGk=" })) // "data:text/plain;base64,aGk="
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const url = (file: FilePart): string =>
  file.source._tag === "Url" ? file.source.url : `data:${file.mediaType};base64,${file.source.data}`

/**
 * The text of parts: their text parts, joined by blank lines.
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * Part.textOf([Part.text("a"), Part.image({ url: "https://example.com/a.png" }), Part.text("b")]) // "a\n\nb"
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const textOf = (parts: ReadonlyArray<InputPart>): string =>
  parts.flatMap((part) => part._tag === "Text" ? [part.text] : []).join("\n\n")

/**
 * A file in words, for where it cannot go itself (an API that does not take it, a log):
 * its name, media type and size or URL.
 *
 * @example
 * ```ts
 * import { Part } from "@agentfx/core"
 *
 * Part.describe(Part.file({ mediaType: "audio/wav", name: "memo.wav", data: "UklGRg==" })) // 'file "memo.wav" (audio/wav, 4 bytes)'
 * ```
 *
 * @since 0.1.0
 * @category utils
 */
export const describe = (file: FilePart): string =>
  `file${file.name === undefined ? "" : ` ${JSON.stringify(file.name)}`} (${file.mediaType}, ${
    file.source._tag === "Url" ? file.source.url : `${inlineBytes(file)} bytes`
  })`
