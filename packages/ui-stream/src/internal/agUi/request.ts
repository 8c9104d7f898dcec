/**
 * AG-UI's `RunAgentInput`, read: the answers to a paused run's interrupts (`resume`), or a new
 * turn — the last message, a user message: its text, and its media parts as files. The rest of
 * the conversation the client sends is not read (the thread's history is the server's), nor its
 * `state`, `tools`, `context` and `forwardedProps`. Every refusal is an `InvalidRequest` that
 * says what is wrong and where (`messages[2].content[1]`, `resume[0]`).
 */
import type { Decision } from "@agentfx/core"
import { Decision as Decisions, Part } from "@agentfx/core"
import { Effect, Result, Schema } from "effect"
import type { HttpServerRequest } from "effect/http"
import { Answer, type ResumeEntry, RunAgentInput } from "../../AgUiApi.js"
import { InvalidRequest } from "../../ChatApi.js"
import * as Approval from "../approval.js"
import { isMediaType, isSource, quoted, readJson } from "../request.js"

/** One answer of the resume: where the request has it, the interrupt it answers, and the decision it makes of its call. */
export interface Entry {
  readonly index: number
  readonly interruptId: string
  readonly approval: Approval.Approval
  readonly decision: Decision.CallDecision
}

export type Parsed =
  | { readonly _tag: "Turn"; readonly threadId: string; readonly runId: string; readonly input: string | ReadonlyArray<Part.InputPart> }
  | { readonly _tag: "Answers"; readonly threadId: string; readonly runId: string; readonly pausedRunId: string; readonly entries: ReadonlyArray<Entry> }

/** What the body is held to: its nesting, and each inline file's bytes (the agent's `limits.fileBytes`). */
export interface Bounds {
  readonly depth: number
  readonly fileBytes: number
}

const invalid = (message: string) => new InvalidRequest({ message })

/** The values refused are quoted back in the problem: they are the sender's own. */
const reporting = { reportInput: true } as const
const decodeInput = Schema.decodeUnknownResult(RunAgentInput, reporting)
const decodeAnswer = Schema.decodeUnknownResult(Answer, reporting)

const Message = Schema.Struct({ role: Schema.String })
const UserMessage = Schema.Struct({
  content: Schema.Union([Schema.String, Schema.Array(Schema.StructWithRest(Schema.Struct({ type: Schema.String }), [Schema.Record(Schema.String, Schema.Unknown)]))])
})
const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })
const MediaPart = Schema.Struct({
  type: Schema.Literals(["image", "audio", "video", "document"]),
  source: Schema.Union([
    Schema.Struct({ type: Schema.Literal("data"), value: Schema.String, mimeType: Schema.String }),
    Schema.Struct({ type: Schema.Literal("url"), value: Schema.String, mimeType: Schema.optionalKey(Schema.String) }),
    Schema.Struct({ type: Schema.Literal("file"), value: Schema.String })
  ])
})
const decodeMessage = Schema.decodeUnknownResult(Message, reporting)
const decodeUser = Schema.decodeUnknownResult(UserMessage, reporting)
const decodeText = Schema.decodeUnknownResult(TextPart)
const decodeMedia = Schema.decodeUnknownResult(MediaPart, reporting)

/** How a resolved interrupt is answered, for a refusal that asks for one. */
const answers = `{ "type": "approve" } (with "args" to edit them), { "type": "reject", "reason": "…" } or { "type": "reply", "value": … }`

/**
 * The file of an AG-UI media part, or what is wrong with it — said of the part, where the
 * request has it (`what`: `messages[0].content[1]`), in AG-UI's terms: its `source`, its
 * `mimeType`, its `value`. The rules are core's (`Part.FilePart`; the run checks again as it starts).
 */
const fileOf = (what: string, part: typeof MediaPart.Type, fileBytes: number): Part.FilePart | string => {
  const { source } = part
  if (source.type === "file") {
    return `${what}: its source is a provider's file handle (${quoted(source.value)}), which agentfx cannot read: send the file's data (source type "data") or its URL`
  }
  if (source.mimeType === undefined) return `${what}: its source has no mimeType: give the file's media type, e.g. image/png or application/pdf`
  if (!isMediaType(source.mimeType)) {
    return `${what}: its source's mimeType ${quoted(source.mimeType)} is not a media type: give type/subtype, e.g. image/png or application/pdf`
  }
  if (source.type === "data" && !isSource({ _tag: "Base64", data: source.value })) {
    return `${what}: its source's value is not base64 (A–Z, a–z, 0–9, + and /, then = padding), without a data: prefix`
  }
  if (source.type === "url" && !isSource({ _tag: "Url", url: source.value })) {
    return `${what}: its source's value ${quoted(source.value)} is not an absolute URL (https://…)`
  }
  const file = source.type === "data"
    ? Part.file({ mediaType: source.mimeType, data: source.value })
    : Part.file({ mediaType: source.mimeType, url: source.value })
  const bytes = Part.inlineBytes(file)
  return bytes > fileBytes
    ? `${what} is ${bytes.toLocaleString("en-US")} bytes, more than the ${fileBytes.toLocaleString("en-US")} this agent takes (limits.fileBytes)`
    : file
}

/** What the user said: the text of the last message, or its text and media parts in order. */
const turn = (messages: ReadonlyArray<unknown>, fileBytes: number): Result.Result<string | ReadonlyArray<Part.InputPart>, string> => {
  const where = `messages[${messages.length - 1}]`
  const last = messages.at(-1)
  if (last === undefined) return Result.fail("The RunAgentInput has neither a message nor a resume: send a user message, or answer a paused run's interrupts with resume")
  const message = decodeMessage(last)
  if (Result.isFailure(message)) return Result.fail(`The last message (${where}) is not a message: ${message.failure.message}`)
  const { role } = message.success
  if (role !== "user") {
    return Result.fail(`The last message (${where}) is a${/^[aeiou]/.test(role) ? "n" : ""} ${role} message: send a user message last, or answer a paused run's interrupts with resume`)
  }
  const user = decodeUser(last)
  if (Result.isFailure(user)) return Result.fail(`The last message (${where}) is not a user message: ${user.failure.message}`)
  const { content } = user.success
  if (typeof content === "string") return content.trim().length === 0 ? Result.fail(`The last message (${where}) has no text`) : Result.succeed(content)
  const input: Array<Part.InputPart> = []
  for (const [i, part] of content.entries()) {
    const text = decodeText(part)
    if (Result.isSuccess(text)) {
      input.push(Part.text(text.success.text))
      continue
    }
    const what = `${where}.content[${i}]`
    if (!["image", "audio", "video", "document"].includes(part.type)) return Result.fail(`${what} is not a text or media part (${part.type}): agentfx reads text and files`)
    const media = decodeMedia(part)
    if (Result.isFailure(media)) return Result.fail(`${what} is not a media part: ${media.failure.message}`)
    const file = fileOf(what, media.success, fileBytes)
    if (typeof file === "string") return Result.fail(file)
    input.push(file)
  }
  if (input.some((part) => part._tag === "File")) return Result.succeed(input)
  const text = Part.textOf(input)
  return text.trim().length === 0 ? Result.fail(`The last message (${where}) has no text`) : Result.succeed(text)
}

/** The decision one resume entry makes of its call. */
const decisionOf = (what: string, entry: typeof ResumeEntry.Type): Result.Result<Decision.CallDecision, string> => {
  if (entry.status === "cancelled") return Result.succeed(Decisions.reject())
  if (entry.payload === undefined) return Result.fail(`${what} is resolved without a payload: send ${answers}`)
  const answer = decodeAnswer(entry.payload)
  if (Result.isFailure(answer)) return Result.fail(`${what}: its payload is not an answer (${answers}): ${answer.failure.message}`)
  const value = answer.success
  switch (value.type) {
    case "approve":
      return Result.succeed(Decisions.approve({ args: value.args }))
    case "reject":
      return Result.succeed(Decisions.reject({ message: value.reason }))
    case "reply":
      return Result.succeed(Decisions.reply({ value: value.value }))
  }
}

/** The answers of a resume: each entry's interrupt (one this endpoint sent), no interrupt twice, one paused run. */
const resumeOf = (resume: ReadonlyArray<typeof ResumeEntry.Type>): Result.Result<{ readonly pausedRunId: string; readonly entries: ReadonlyArray<Entry> }, string> => {
  const entries: Array<Entry> = []
  const seen = new Map<string, number>()
  for (const [index, entry] of resume.entries()) {
    const what = `resume[${index}] (interrupt ${JSON.stringify(entry.interruptId)})`
    const approval = Approval.parse(entry.interruptId)
    if (approval === undefined) return Result.fail(`resume[${index}]: the interrupt id ${JSON.stringify(entry.interruptId)} is not one this endpoint sent`)
    const before = seen.get(entry.interruptId)
    if (before !== undefined) return Result.fail(`${what} answers the interrupt resume[${before}] answered: answer each interrupt once`)
    seen.set(entry.interruptId, index)
    const decision = decisionOf(what, entry)
    if (Result.isFailure(decision)) return Result.fail(decision.failure)
    entries.push({ index, interruptId: entry.interruptId, approval, decision: decision.success })
  }
  const runs = [...new Set(entries.map((entry) => entry.approval.runId))]
  if (runs.length > 1) return Result.fail(`The resume answers interrupts of ${runs.length} runs (${runs.join(", ")}): answer one pause at a time`)
  return Result.succeed({ pausedRunId: runs[0]!, entries })
}

/** Reads and checks the body of a `POST /api/agui`, held to `bounds`. */
export const parse = (request: HttpServerRequest.HttpServerRequest, bounds: Bounds): Effect.Effect<Parsed, InvalidRequest> =>
  Effect.gen(function*() {
    const json = yield* readJson(request, "the RunAgentInput", bounds.depth)
    const body = decodeInput(json)
    if (Result.isFailure(body)) return yield* invalid(`The body is not a RunAgentInput: ${body.failure.message}`)
    const { messages, resume, runId, threadId } = body.success
    if (resume !== undefined && resume.length > 0) {
      const answered = resumeOf(resume)
      if (Result.isFailure(answered)) return yield* invalid(answered.failure)
      return { _tag: "Answers", threadId, runId, ...answered.success }
    }
    const input = turn(messages, bounds.fileBytes)
    if (Result.isFailure(input)) return yield* invalid(input.failure)
    return { _tag: "Turn", threadId, runId, input: input.success }
  })
