/**
 * Files and reasoning on the wire, as every adapter shares them: a file as a URL or inline
 * data, the text that stands for a file an API cannot take (with a warning, once per reason),
 * the tool results' files moved into a user message for APIs whose tool results take text
 * only, the files a model answers with, read from the wire and checked, and which reasoning
 * goes back to whom (docs/decisions/095–097, 164).
 */
import { ChatModel, Message, Part } from "@agentfx/core"
import { Effect, Result, Schema } from "effect"
import { invalid } from "./wireJson.js"

/** Where a file can be refused: in what a person said, in a tool's result, or in the model's own answer (sent back with the history). */
export type Place = "input" | "tool-result" | "answer"

/** Why an API cannot take `file` at `place`; `undefined` when it can. */
export type Refusal = (file: Part.FilePart, place: Place) => string | undefined

/** A file's name, or one made from its media type (`file.pdf`): some APIs require one. */
export const nameOf = (file: Part.FilePart): string => file.name ?? `file.${file.mediaType.split("/")[1]?.replace(/[^\w.+-]/g, "") || "bin"}`

/** The text that stands in the request for a file the API cannot take: the model knows it was there. */
export const leftOut = (file: Part.FilePart, why: string): string => `[${Part.describe(file)} was not sent: ${why}]`

/** Every file of a request, with where it is. */
const filesOf = (request: ChatModel.ChatRequest): Array<readonly [Part.FilePart, Place]> => {
  const found: Array<readonly [Part.FilePart, Place]> = []
  for (const message of request.messages) {
    if (message._tag === "User") for (const part of message.parts ?? []) if (part._tag === "File") found.push([part, "input"])
    if (message._tag === "ToolResult") for (const file of message.files ?? []) found.push([file, "tool-result"])
    if (message._tag === "Assistant") for (const file of message.files ?? []) found.push([file, "answer"])
  }
  return found
}

/**
 * Logs a warning the first time a request holds a file that `refuses` names a reason for
 * (once per reason, for the model this belongs to): the file is described in text instead,
 * never dropped silently.
 */
export const warnLeftOut = (provider: string, refuses: Refusal) => {
  const warned = new Set<string>()
  return (request: ChatModel.ChatRequest): Effect.Effect<void> =>
    Effect.suspend(() => {
      const fresh: Array<string> = []
      for (const [file, place] of filesOf(request)) {
        const why = refuses(file, place)
        if (why !== undefined && !warned.has(why)) {
          warned.add(why)
          fresh.push(`${Part.describe(file)}: ${why}`)
        }
      }
      return fresh.length === 0
        ? Effect.void
        : Effect.logWarning(`${provider} cannot take ${fresh.join("; ")}. The model is told in text that the file was there.`)
    })
}

/**
 * The messages with the files of tool results moved into a user message right after each run
 * of results: for APIs whose tool results take text only (Chat Completions, and `AiChatModel`: see `internal/languageModel.ts`).
 * The message names each file's call before it; the results themselves keep their text.
 */
export const toolFilesAsUserMessages = (messages: ReadonlyArray<ChatModel.ModelMessage>): ReadonlyArray<ChatModel.ModelMessage> => {
  if (!messages.some((message) => message._tag === "ToolResult" && message.files !== undefined)) return messages
  const out: Array<ChatModel.ModelMessage> = []
  let pending: Array<Part.InputPart> = []
  const flush = () => {
    if (pending.length > 0) out.push(Message.user([Part.text("The tool results above came with these files:"), ...pending]))
    pending = []
  }
  for (const message of messages) {
    if (message._tag !== "ToolResult") flush()
    out.push(message)
    if (message._tag === "ToolResult" && message.files !== undefined) {
      for (const file of message.files) pending.push(Part.text(`From ${message.toolName} (call ${message.callId}):`), file)
    }
  }
  flush()
  return out
}

/**
 * Who made a reasoning part, as the adapters mark it: the provider and the origin of its API
 * (`anthropic:https://api.anthropic.com`). An adapter sends back only reasoning with its own
 * mark: never another provider's, nor another server's (a run that falls back to another model).
 */
export const reasoningOwner = (provider: string, url: string): string => `${provider}:${URL.canParse(url) ? new URL(url).origin : url}`

/** The reasoning of an assistant message that `owner` made. */
export const ownReasoning = (message: Message.AssistantMessage, owner: string): ReadonlyArray<Part.ReasoningPart> =>
  message.reasoning?.filter((part) => part.provider === owner) ?? []

/**
 * What stands in an assistant turn for the files the model answered with, where the API takes
 * text only there (`refuses` says why, for the "answer" place): a line of text for each.
 */
export const answerFilesText = (message: Message.AssistantMessage, refuses: Refusal): ReadonlyArray<string> =>
  (message.files ?? []).map((file) => leftOut(file, refuses(file, "answer") ?? "the model's own turn takes text only"))

const checkFile = Schema.decodeUnknownResult(Part.FilePart)

/**
 * A file the model answered with, as read from the wire, checked as any file of the history is
 * (a run's checkpoint holds it): one that is not a file — its bytes not base64, no media type, a
 * URL that is none — is an `invalid-response` naming what is wrong, never kept and never dropped
 * unseen.
 */
export const answerFile = (provider: string, file: Part.FilePart): Result.Result<Part.FilePart, ChatModel.ModelError> =>
  Result.mapError(checkFile(file), (error) => invalid(`${provider} answered with a file that cannot be kept: ${error.message}`))

/**
 * A file a model answered with by URL (`mediaType` when the wire says it): a `data:` URL becomes
 * inline base64 — its own media type used when none is given, text that is not base64 encoded —
 * another URL is kept as the file's URL. Without a media type, an image's comes from its bytes
 * (`Part.image`), else `image/*` (the wire said it is an image).
 */
export const imageOfUrl = (url: string, mediaType?: string): Part.FilePart => {
  const inline = /^data:([^,]*?),/is.exec(url)
  if (inline === null) return Part.image({ url, ...(mediaType === undefined ? {} : { mediaType }) })
  const [type, ...parameters] = inline[1]!.split(";")
  const body = url.slice(inline[0].length)
  const base64 = parameters.some((parameter) => parameter.trim().toLowerCase() === "base64")
  const data = base64 ? body.replace(/\s+/g, "") : Buffer.from(decodeURIComponentSafe(body), "utf8").toString("base64")
  const given = mediaType ?? (type !== undefined && type.trim().length > 0 ? type.trim() : undefined)
  return Part.image({ data, ...(given === undefined ? {} : { mediaType: given }) })
}

const decodeURIComponentSafe = (text: string): string => {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}
