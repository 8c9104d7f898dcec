/**
 * A `ChatModel` that answers from a script: for tests, examples and benchmarks. It records
 * every request it receives, unless told not to.
 *
 * @since 0.1.0
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import type { ChatRequest, ChatResponse, FinishReason, StreamPart, Usage } from "./ChatModel.js"
import { ChatModel, emptyUsage, ModelError } from "./ChatModel.js"
import type { JsonValue } from "./Json.js"
import type { FilePart, ReasoningPart } from "./Part.js"

/**
 * One scripted answer. Tool calls without an `id` get `call_<request>_<index>`. `reasoning`
 * is the model's reasoning as a provider would return it (kept in the history like a real
 * provider's: a script can read it back in the next request); `files`, files the model answers
 * with (an image it generated), kept in the history's assistant message. A step function reads every
 * request whole, the files of user messages and tool results included.
 *
 * @since 0.1.0
 * @category models
 */
export interface Step {
  readonly text?: string
  /** When streamed, the text arrives in these pieces (their concatenation is the text, which `text` may then omit). */
  readonly chunks?: ReadonlyArray<string>
  readonly toolCalls?: ReadonlyArray<{ readonly id?: string; readonly name: string; readonly args: JsonValue }>
  readonly finishReason?: FinishReason
  readonly usage?: Usage
  readonly reasoning?: ReadonlyArray<ReasoningPart>
  readonly files?: ReadonlyArray<FilePart>
}

/**
 * A step computed from the request (e.g. an answer that depends on the last tool result);
 * it may be an Effect, to take (virtual) time or to fail.
 *
 * @since 0.1.0
 * @category models
 */
export type StepFunction = (request: ChatRequest, index: number) => Step | Effect.Effect<Step, ModelError>

/**
 * A list of steps answered in order (running past its end is a `ModelError` with reason
 * `script-exhausted`), or one function answering every request.
 *
 * @since 0.1.0
 * @category models
 */
export type Script = ReadonlyArray<Step | StepFunction> | StepFunction

/**
 * What the scripted model has seen.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ScriptedChatModel } from "@agentfx/core"
 *
 * const lastRequest = Effect.map(ScriptedChatModel.ScriptedChatModel, (model) => model.requests.at(-1))
 * ```
 *
 * @since 0.1.0
 * @category services
 */
export class ScriptedChatModel extends Context.Service<
  ScriptedChatModel,
  { readonly requests: ReadonlyArray<ChatRequest> }
>()("@agentfx/core/ScriptedChatModel") {}

/**
 * A step that answers with text.
 *
 * @example
 * ```ts
 * import { ScriptedChatModel } from "@agentfx/core"
 *
 * ScriptedChatModel.text("It is sunny.") // { text: "It is sunny." }
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const text = (text: string): Step => ({ text })

/**
 * A step that calls tools.
 *
 * @example
 * ```ts
 * import { ScriptedChatModel } from "@agentfx/core"
 *
 * ScriptedChatModel.toolCalls({ id: "call_1", name: "get_weather", args: { city: "Oslo" } })
 * ```
 *
 * @since 0.1.0
 * @category constructors
 */
export const toolCalls = (...calls: NonNullable<Step["toolCalls"]>): Step => ({ toolCalls: calls })

const toResponse = (step: Step, index: number): ChatResponse => {
  const calls = (step.toolCalls ?? []).map((call, i) => ({
    id: call.id ?? `call_${index}_${i}`,
    name: call.name,
    args: call.args
  }))
  return {
    text: step.text ?? step.chunks?.join("") ?? "",
    toolCalls: calls,
    finishReason: step.finishReason ?? (calls.length > 0 ? "tool-calls" : "stop"),
    usage: step.usage ?? emptyUsage,
    ...(step.reasoning === undefined ? {} : { reasoning: step.reasoning }),
    ...(step.files === undefined ? {} : { files: step.files })
  }
}

/**
 * Options of {@link layer}.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * What a step's index counts: the requests this Layer answered (`"layer"`, the default), or
   * the requests of the run that asks (`"run"`: each run starts at step 0 and goes on across its
   * resumes, so that one script serves every run of a shared runtime).
   */
  readonly index?: "layer" | "run"
  /**
   * Keep every request in `ScriptedChatModel.requests` (default `true`). Each request holds a
   * copy of the history, so a run of n model calls keeps O(n²) messages: turn it off for
   * long runs and benchmarks, where nothing reads them.
   */
  readonly recordRequests?: boolean
}

/**
 * Provides `ChatModel` answering from `script`, and `ScriptedChatModel` to read the
 * recorded requests. Each Layer build starts the script from the beginning. Streamed, a
 * step's text arrives as its `chunks` (or in one piece).
 *
 * @example
 * ```ts
 * import { ScriptedChatModel } from "@agentfx/core"
 *
 * const ModelLive = ScriptedChatModel.layer([
 *   ScriptedChatModel.toolCalls({ name: "get_weather", args: { city: "Oslo" } }),
 *   (request) => ScriptedChatModel.text(`Done after ${request.messages.length} messages`)
 * ])
 * // a long run that nobody inspects: answer from the last message, keep no requests
 * const Unrecorded = ScriptedChatModel.layer(
 *   (request) => ScriptedChatModel.text(`${request.messages.length} messages`),
 *   { recordRequests: false }
 * )
 * ```
 *
 * @since 0.1.0
 * @category layers
 */
export const layer = (script: Script, options?: Options): Layer.Layer<ChatModel | ScriptedChatModel> =>
  Layer.effectContext(Effect.sync(() => {
    const requests: Array<ChatRequest> = []
    const record = options?.recordRequests !== false
    const perRun = options?.index === "run"
    const receivedByRun = new Map<string, number>()
    let received = 0
    const indexOf = (request: ChatRequest) => {
      if (!perRun) return received++
      const key = request.runId ?? ""
      const index = receivedByRun.get(key) ?? 0
      receivedByRun.set(key, index + 1)
      return index
    }
    /** The step for request `index`: a step, an effect of one, or the failure of an exhausted script. */
    const answer = (request: ChatRequest, index: number): Step | Effect.Effect<Step, ModelError> => {
      const entry = typeof script === "function" ? script : script[index]
      if (entry === undefined) {
        return Effect.fail(
          new ModelError({
            reason: "script-exhausted",
            message: `ScriptedChatModel received request #${index + 1}, but its script has only ${
              (script as ReadonlyArray<unknown>).length
            } step(s)`
          })
        )
      }
      return typeof entry === "function" ? entry(request, index) : entry
    }
    /** Answers `request` with `f(step, response)`: at once for a plain step, after the effect otherwise. */
    const next = <A>(request: ChatRequest, f: (step: Step, response: ChatResponse) => A) =>
      Effect.suspend((): Effect.Effect<A, ModelError> => {
        const index = indexOf(request)
        if (record) requests.push(request)
        const step = answer(request, index)
        return Effect.isEffect(step)
          ? Effect.map(step, (s) => f(s, toResponse(s, index)))
          : Effect.succeed(f(step, toResponse(step, index)))
      })
    const model: ChatModel.Service = {
      model: "scripted",
      generate: (request) => next(request, (_, response) => response),
      stream: (request) =>
        Stream.unwrap(next(request, (step, response) => {
          const deltas = (step.chunks ?? [response.text]).filter((text) => text.length > 0)
          return Stream.fromIterable<StreamPart>([
            ...deltas.map((text): StreamPart => ({ _tag: "TextDelta", text })),
            { _tag: "Done", response }
          ])
        }))
    }
    return Context.make(ChatModel, model).pipe(Context.add(ScriptedChatModel, { requests }))
  }))
