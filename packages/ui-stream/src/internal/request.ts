/**
 * `useChat`'s request body, read: a new turn (the last message is the user's: its text and
 * file parts) or the answers to a pause (the last message is the assistant's, its tool parts
 * answered). Every refusal is an `InvalidRequest` that says what is wrong and where.
 */
import { Part } from "@agentfx/core"
import { ByteSize, Effect, Result, Schema } from "effect"
import type { HttpServerRequest } from "effect/http"
import { HttpIncomingMessage } from "effect/http"
import { ChatRequest, InvalidRequest } from "../ChatApi.js"
import * as Approval from "./approval.js"

/** The largest body read: `useChat` sends the whole conversation with every request. */
export const maxBodyBytes = 16 * 1024 * 1024

/** One answer to an approval request. */
export interface Answer {
  readonly approval: Approval.Approval
  readonly approved: boolean
  readonly reason: string | undefined
}

export type Parsed =
  | { readonly _tag: "Turn"; readonly chatId: string; readonly input: string | ReadonlyArray<Part.InputPart> }
  | { readonly _tag: "Answers"; readonly chatId: string; readonly runId: string; readonly answers: ReadonlyArray<Answer> }

/** What the body is held to: its nesting (the agent's limit on arguments, and the message's own levels), and each inline file's bytes (the agent's `limits.fileBytes`). */
export interface Bounds {
  readonly depth: number
  readonly fileBytes: number
}

const invalid = (message: string) => new InvalidRequest({ message })

const Message = Schema.Struct({
  role: Schema.Literals(["user", "assistant", "system"]),
  parts: Schema.Array(Schema.StructWithRest(Schema.Struct({ type: Schema.String }), [Schema.Record(Schema.String, Schema.Unknown)]))
})

const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

/** The AI SDK's file part: `url` is a `data:` URL (what `useChat` makes of a `FileList`) or one the provider fetches. */
const FilePart = Schema.Struct({
  type: Schema.Literal("file"),
  mediaType: Schema.String,
  filename: Schema.optional(Schema.String),
  url: Schema.String
})

const AnsweredPart = Schema.Struct({
  toolCallId: Schema.String,
  approval: Schema.Struct({ id: Schema.String, approved: Schema.Boolean, reason: Schema.optional(Schema.String) })
})

/** The values refused are quoted back in the problem: they are the sender's own. */
const reporting = { reportInput: true } as const
const decodeRequest = Schema.decodeUnknownResult(ChatRequest, reporting)
const decodeMessage = Schema.decodeUnknownResult(Message, reporting)
const decodeText = Schema.decodeUnknownResult(TextPart)
const decodeFile = Schema.decodeUnknownResult(FilePart, reporting)
const decodeAnswered = Schema.decodeUnknownResult(AnsweredPart, reporting)

const problem = (error: Schema.SchemaError) => error.message

/** Core's rules for a file (`Part.FilePart`): checked where a request has the file, to say what is wrong in the request's words. */
export const isMediaType = Schema.is(Part.FilePart.fields.mediaType)
export const isSource = Schema.is(Part.FileSource)

/** A value the sender gave, quoted in a problem, cut short (a URL may be megabytes). */
export const quoted = (value: string) => JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)

/**
 * The file of an AI SDK file part, or what is wrong with it — said of the part, where the
 * sender wrote it (`what`: `messages[0].parts[1]`), and in the sender's terms: its `mediaType`,
 * its `url`, the `data:` URL it is. The rules are core's (`Part.FilePart`, checked again when
 * the run starts); only the words are this endpoint's.
 */
const fileOf = (what: string, part: typeof FilePart.Type, fileBytes: number): Part.FilePart | string => {
  const { filename, mediaType, url } = part
  const named = filename === undefined ? what : `${what} (${quoted(filename)})`
  if (!isMediaType(mediaType)) {
    return `${named}: its mediaType ${quoted(mediaType)} is not a media type: give type/subtype, e.g. image/png or application/pdf`
  }
  if (/^data:/i.test(url)) {
    const comma = url.indexOf(",")
    if (comma < 0) return `${named}: its url is a data: URL without data (it has no comma): send data:<media type>;base64,<the file's base64>`
    if (!/;base64$/i.test(url.slice(0, comma))) {
      return `${named}: its data: URL is not base64-encoded (no ";base64" before the comma): send data:<media type>;base64,<the file's base64>, as useChat does`
    }
    if (!isSource({ _tag: "Base64", data: url.slice(comma + 1) })) {
      return `${named}: the data of its data: URL is not base64 (A–Z, a–z, 0–9, + and /, then = padding)`
    }
  } else if (!isSource({ _tag: "Url", url })) {
    return `${named}: its url ${quoted(url)} is neither a data: URL nor an absolute URL (https://…)`
  }
  const file = Part.file({ mediaType, url, ...(filename === undefined ? {} : { name: filename }) })
  const bytes = Part.inlineBytes(file)
  return bytes > fileBytes
    ? `${named} is ${bytes.toLocaleString("en-US")} bytes, more than the ${fileBytes.toLocaleString("en-US")} this agent takes (limits.fileBytes)`
    : file
}

/**
 * Whether `value` nests objects and arrays more than `limit` levels deep. Measured without
 * recursion: decoding errors print the values they reject, by recursion, and a hostile body
 * thousands of levels deep would exhaust the stack.
 */
export const nestsDeeper = (value: unknown, limit: number): boolean => {
  const stack: Array<{ readonly value: unknown; readonly depth: number }> = [{ value, depth: 0 }]
  while (stack.length > 0) {
    const top = stack.pop()!
    if (typeof top.value !== "object" || top.value === null) continue
    if (top.depth >= limit) return true
    for (const child of Object.values(top.value)) stack.push({ value: child, depth: top.depth + 1 })
  }
  return false
}

/**
 * What the user said: the text of its text parts (joined by blank lines), or — when it has
 * files — its text and file parts in order. Any other kind of part is refused (it would be
 * lost); a file is checked, and held to the agent's `limits.fileBytes`, here (the run checks it
 * again as it starts).
 */
const turn = (chatId: string, where: string, parts: ReadonlyArray<{ readonly type: string }>, fileBytes: number): Effect.Effect<Parsed, InvalidRequest> => {
  const input: Array<Part.InputPart> = []
  for (const [i, part] of parts.entries()) {
    const text = decodeText(part)
    if (Result.isSuccess(text)) {
      input.push(Part.text(text.success.text))
      continue
    }
    if (part.type !== "file") {
      return Effect.fail(invalid(`${where}.parts[${i}] is not a text or file part (${part.type}): agentfx reads text and files`))
    }
    const decoded = decodeFile(part)
    if (Result.isFailure(decoded)) return Effect.fail(invalid(`${where}.parts[${i}] is not a file part: ${problem(decoded.failure)}`))
    const file = fileOf(`${where}.parts[${i}]`, decoded.success, fileBytes)
    if (typeof file === "string") return Effect.fail(invalid(file))
    input.push(file)
  }
  const text = Part.textOf(input)
  if (input.some((part) => part._tag === "File")) return Effect.succeed({ _tag: "Turn", chatId, input })
  return text.trim().length === 0 ? Effect.fail(invalid(`The last message (${where}) has no text`)) : Effect.succeed({ _tag: "Turn", chatId, input: text })
}

/** The answered approval requests of the assistant's message. */
const answers = (chatId: string, where: string, parts: ReadonlyArray<{ readonly type: string }>): Effect.Effect<Parsed, InvalidRequest> => {
  const found: Array<Answer> = []
  for (const [i, part] of parts.entries()) {
    if ((part as { readonly state?: unknown }).state !== "approval-responded") continue
    const answered = decodeAnswered(part)
    if (Result.isFailure(answered)) return Effect.fail(invalid(`${where}.parts[${i}] is not an approval response: ${problem(answered.failure)}`))
    const { approval: { approved, id, reason }, toolCallId } = answered.success
    const approval = Approval.parse(id)
    if (approval === undefined || approval.callId !== toolCallId) {
      return Effect.fail(invalid(`${where}.parts[${i}]: the approval id ${JSON.stringify(id)} is not one this endpoint sent for call ${JSON.stringify(toolCallId)}`))
    }
    found.push({ approval, approved, reason })
  }
  if (found.length === 0) {
    return Effect.fail(invalid(`The last message (${where}) is the assistant's, with no approval response: send a user message, or answer its approval requests`))
  }
  const runIds = [...new Set(found.map((answer) => answer.approval.runId))]
  if (runIds.length > 1) {
    return Effect.fail(invalid(`The approval responses answer ${runIds.length} runs (${runIds.join(", ")}): answer one pause at a time`))
  }
  return Effect.succeed({ _tag: "Answers", chatId, runId: runIds[0]!, answers: found })
}

/**
 * A request's JSON body, read and held to the bounds every endpoint keeps: sent as
 * `application/json` (`what` names the body in the refusal), at most `maxBodyBytes`, JSON, and
 * nested at most `depth` levels — checked before any Schema decodes it.
 */
export const readJson = (request: HttpServerRequest.HttpServerRequest, what: string, depth: number): Effect.Effect<unknown, InvalidRequest> =>
  Effect.gen(function*() {
    const contentType = request.headers["content-type"] ?? ""
    if (!/^application\/json\b/i.test(contentType)) {
      return yield* invalid(`Send ${what} as application/json (its content type is ${JSON.stringify(contentType)})`)
    }
    const tooLarge = invalid(`The body could not be read: larger than ${maxBodyBytes} bytes, or cut off`)
    if (Number(request.headers["content-length"] ?? 0) > maxBodyBytes) return yield* tooLarge
    const text = yield* request.text.pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
      Effect.mapError(() => tooLarge)
    )
    const json = yield* Effect.try({
      try: (): unknown => JSON.parse(text),
      catch: (error) => invalid(`The body is not JSON: ${error instanceof Error ? error.message : String(error)}`)
    })
    if (nestsDeeper(json, depth)) return yield* invalid(`The body nests deeper than ${depth} levels`)
    return json
  })

/** Reads and checks the body of a `POST /api/chat`, held to `bounds`. */
export const parse = (request: HttpServerRequest.HttpServerRequest, bounds: Bounds): Effect.Effect<Parsed, InvalidRequest> =>
  Effect.gen(function*() {
    const { depth, fileBytes } = bounds
    const json = yield* readJson(request, "the chat request", depth)
    const body = decodeRequest(json)
    if (Result.isFailure(body)) return yield* invalid(`The body is not a chat request: ${problem(body.failure)}`)
    const { id: chatId, messages, trigger } = body.success
    if (trigger === "regenerate-message") {
      return yield* invalid("Regenerating a message is not supported: the conversation goes on from the server's memory; send a new message")
    }
    const where = `messages[${messages.length - 1}]`
    const last = decodeMessage(messages[messages.length - 1])
    if (Result.isFailure(last)) return yield* invalid(`The last message (${where}) is not a message: ${problem(last.failure)}`)
    const { parts, role } = last.success
    if (role === "system") return yield* invalid(`The last message (${where}) is a system message: send a user message`)
    return yield* role === "user" ? turn(chatId, where, parts, fileBytes) : answers(chatId, where, parts)
  })
