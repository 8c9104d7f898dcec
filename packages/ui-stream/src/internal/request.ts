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
  | { readonly _tag: "Answers"; readonly chatId: string; readonly answers: ReadonlyArray<Answer> }

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
 * lost); a file is checked, and held to the agent's limits, when the run starts.
 */
const turn = (chatId: string, where: string, parts: ReadonlyArray<{ readonly type: string }>): Effect.Effect<Parsed, InvalidRequest> => {
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
    const file = decodeFile(part)
    if (Result.isFailure(file)) return Effect.fail(invalid(`${where}.parts[${i}] is not a file part: ${problem(file.failure)}`))
    const { filename, mediaType, url } = file.success
    input.push(Part.file({ mediaType, url, ...(filename === undefined ? {} : { name: filename }) }))
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
  return found.length === 0
    ? Effect.fail(invalid(`The last message (${where}) is the assistant's, with no approval response: send a user message, or answer its approval requests`))
    : Effect.succeed({ _tag: "Answers", chatId, answers: found })
}

/** Reads and checks the body of a `POST /api/chat`; `depth` bounds its nesting (the agent's limit on arguments, and the message's own levels). */
export const parse = (request: HttpServerRequest.HttpServerRequest, depth: number): Effect.Effect<Parsed, InvalidRequest> =>
  Effect.gen(function*() {
    const contentType = request.headers["content-type"] ?? ""
    if (!/^application\/json\b/i.test(contentType)) {
      return yield* invalid(`Send the chat request as application/json (its content type is ${JSON.stringify(contentType)})`)
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
    return yield* role === "user" ? turn(chatId, where, parts) : answers(chatId, where, parts)
  })
