/**
 * The one fold of a model's answer into a `ChatResponse`, used by every adapter, streamed or
 * not (a whole body is an answer in one piece): the text and a refusal's text as they come,
 * the tool calls in the order they began, the reasoning the provider requires back, the files
 * the model answered with (decision 164), the latest count of each usage field, the finish
 * reason, and whether the answer ended or was cut. What a wire format says is read by its
 * adapter; how it adds up is decided here.
 */
import type { ChatModel, Json, Part, ToolCall } from "@agentfx/core"
import { Result } from "effect"
import { count, invalid, isCount, isObject, type JsonObject } from "./wireJson.js"

/**
 * The usage rule of every adapter (decisions 025 and 026), from the counts a server sent: a
 * count not sent, or sent as no count (infinite, negative), is 0. The output counts every
 * generated token: when input, output and the server's own total are all counts and the total
 * is larger than input + output (xAI, Gemini's OpenAI-compatible API: their reasoning tokens
 * are in the total only), the output is total − input. The total is always input + output.
 */
export const usageOf = (input: unknown, output: unknown, total?: unknown): ChatModel.Usage => {
  const inputTokens = count(input)
  const generated = count(output)
  const outputTokens = isCount(input) && isCount(output) && isCount(total) && total > input + output ? total - input : generated
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
}

/**
 * The model's arguments as JSON. Missing or blank arguments are `{}`. Arguments that are
 * not valid JSON are passed on as the raw string: the tool's schema then refuses them and
 * the model is told (a `semantic` error result), instead of the run failing.
 */
export const parseArguments = (raw: string | null | undefined): Json.JsonValue => {
  if (raw === null || raw === undefined || raw.trim().length === 0) return {}
  try {
    return JSON.parse(raw) as Json.JsonValue
  } catch {
    return raw
  }
}

/** A tool call as it is assembled: its adapter finds it again by its own keys and updates it. */
export interface Call {
  id: string
  name: string
  /** The arguments' JSON text as it came, pieces joined; `undefined` while none came (then `input` is the arguments). */
  args: string | undefined
  /** The arguments sent whole, as a value (Anthropic's `input`, `effect/ai`'s `params`): passed on untouched, however deep. */
  input: unknown
}

/** What a fold needs to know of its wire format. */
export interface Options {
  /** Names the server in messages. */
  readonly provider: string
  /** What ends a whole answer, named when a stream ends without it: `message_stop`, `response.completed`. */
  readonly last: string
  /** The usage from the latest count of each field the server sent (`usageOf`). */
  readonly usage: (counts: JsonObject) => ChatModel.Usage
}

/**
 * One answer being folded. Rules it holds for every adapter:
 * - a refusal's text is the answer's text (after any text before it), and a refusal with text
 *   makes the finish reason `refusal`, whatever the server's;
 * - each usage field is the latest count sent of it: a count that is no count leaves the last
 *   good one (a field never sent is 0);
 * - the latest finish reason wins; none is `unknown`;
 * - an answer whose last event never came, with no finish reason either, was cut: `invalid-response`.
 */
export class StreamFold<C extends Call = Call> {
  private text = ""
  private refused = false
  private readonly calls: Array<C> = []
  private readonly reasoning: Array<Part.ReasoningPart> = []
  private readonly files: Array<Part.FilePart> = []
  private counts: { [field: string]: number } = {}
  private reason: { readonly finish: ChatModel.FinishReason; readonly raw: string | undefined } | undefined = undefined
  private ended = false

  constructor(private readonly options: Options) {}

  /** Text of the answer, added; returned, to be emitted. */
  addText(delta: string): string {
    this.text += delta
    return delta
  }

  /** A refusal's text, added as the answer's text; returned, to be emitted. */
  addRefusal(delta: string): string {
    if (delta.length > 0) this.refused = true
    return this.addText(delta)
  }

  /** A tool call begun: kept in the order calls began. */
  addCall(call: C): C {
    this.calls.push(call)
    return call
  }

  /** The calls so far, in the order they began. */
  get toolCalls(): ReadonlyArray<C> {
    return this.calls
  }

  /** Reasoning to keep in the history (to send back to its provider), in the order it came. */
  addReasoning(part: Part.ReasoningPart): void {
    this.reasoning.push(part)
  }

  /** A file the model answered with (an image it generated; checked by `answerFile`), kept in the order files came. */
  addFile(file: Part.FilePart): void {
    this.files.push(file)
  }

  /** How many files the answer has so far. */
  get fileCount(): number {
    return this.files.length
  }

  /** Usage counts (an object of them, as the server names them): each count replaces the last one of its field. */
  addUsage(wire: unknown): void {
    if (!isObject(wire)) return
    for (const [field, tokens] of Object.entries(wire)) if (isCount(tokens)) this.counts[field] = tokens
  }

  /** Why the model stopped, and the server's own word for it (for telemetry) when it gave one. */
  finish(finish: ChatModel.FinishReason, raw: string | undefined): void {
    this.reason = { finish, raw }
  }

  /** The answer's last event came: nothing after it is read. */
  end(): void {
    this.ended = true
  }

  get finished(): boolean {
    return this.ended
  }

  /** The whole answer, or the `invalid-response` of one cut before its end. */
  response(): Result.Result<ChatModel.ChatResponse, ChatModel.ModelError> {
    const { last, provider, usage } = this.options
    if (!this.ended && this.reason === undefined) {
      return Result.fail(invalid(`${provider}'s stream ended before the answer did (no ${last}): the connection was cut`))
    }
    const raw = this.reason?.raw
    return Result.succeed({
      text: this.text,
      toolCalls: this.calls.map((call): ToolCall.ToolCall => ({
        id: call.id,
        name: call.name,
        args: call.args === undefined ? call.input as Json.JsonValue : parseArguments(call.args)
      })),
      finishReason: this.refused ? "refusal" : this.reason?.finish ?? "unknown",
      providerFinishReasons: raw === undefined ? undefined : [raw],
      usage: usage(this.counts),
      ...(this.reasoning.length === 0 ? {} : { reasoning: this.reasoning.slice() }),
      ...(this.files.length === 0 ? {} : { files: this.files.slice() })
    })
  }
}
