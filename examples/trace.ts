/**
 * Shows the agent loop step by step: every model call (what the model is told, what it
 * asks for), every tool call (start, end, interruption) with its timing.
 */
import type { AgentExit, Message, Tool } from "@agentfx/core"
import { ChatModel, Part } from "@agentfx/core"
import { Console, Effect, Layer } from "effect"

const start = performance.now()
const elapsed = () => `[${Math.round(performance.now() - start).toString().padStart(5)} ms]`

/** Prints a line stamped with the time since the example started. */
export const log = (line: string) => Effect.suspend(() => Console.log(`${elapsed()} ${line}`))

const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`

const short = (value: unknown) => {
  const text = (typeof value === "string" ? value : JSON.stringify(value)).replace(/\s*\n\s*/g, " / ")
  return text.length > 100 ? `${text.slice(0, 100)}…` : text
}

/** The tool results at the end of the history: what the model is being told. */
const newResults = (messages: ReadonlyArray<Message.Message>) => {
  const results: Array<Message.ToolResultMessage> = []
  for (let i = messages.length - 1; i >= 0 && messages[i]!._tag === "ToolResult"; i--) {
    results.unshift(messages[i] as Message.ToolResultMessage)
  }
  return results
}

/** The model, printing each call: the tool results it is sent, what it answers, how long it took. */
export const traced = <E>(layer: Layer.Layer<ChatModel.ChatModel, E>): Layer.Layer<ChatModel.ChatModel, E> =>
  Layer.effect(
    ChatModel.ChatModel,
    Effect.map(ChatModel.ChatModel, (inner) => {
      let calls = 0
      return {
        stream: inner.stream,
        generate: (request) =>
          Effect.gen(function*() {
            calls += 1
            for (const result of newResults(request.messages)) {
              const files = (result.files ?? []).map((file) => ` + ${Part.describe(file)}`).join("")
              yield* log(`  result ${result.callId} ${result.toolName}: ${result.isError ? "ERROR " : ""}${short(result.content)}${files}`)
            }
            yield* log(`model call #${calls} (${plural(request.messages.length, "message")}, ${plural(request.tools.length, "tool")})`)
            const began = performance.now()
            const response = yield* inner.generate(request)
            const took = Math.round(performance.now() - began)
            for (const part of response.reasoning ?? []) yield* log(`  model thinks: ${short(part.text || "(hidden)")}`)
            if (response.text.length > 0) yield* log(`  model says: ${short(response.text)}`)
            for (const call of response.toolCalls) {
              yield* log(`  model asks: ${call.name}(${short(call.args)}) [${call.id}]`)
            }
            yield* log(`  (${took} ms, ${response.usage.totalTokens} tokens, finish: ${response.finishReason})`)
            return response
          })
      }
    })
  ).pipe(Layer.provide(layer))

/** A tool handler that prints when it starts, ends or is interrupted (a timeout), with its duration. */
export const tracedTool = <A, E, R>(context: Tool.CallContext, handler: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    const began = performance.now()
    const took = () => `${Math.round(performance.now() - began)} ms`
    return log(`  tool ${context.toolName} [${context.callId}] started`).pipe(
      Effect.andThen(handler),
      Effect.tap(() => log(`  tool ${context.toolName} [${context.callId}] finished after ${took()}`)),
      Effect.tapError((error) => log(`  tool ${context.toolName} [${context.callId}] failed after ${took()}: ${String(error)}`)),
      Effect.onInterrupt(() => log(`  tool ${context.toolName} [${context.callId}] interrupted after ${took()}`))
    )
  })

/** Prints how a run ended. */
export const showExit = (exit: AgentExit.AgentExit) =>
  exit._tag === "Completed"
    ? Console.log(
      `\ncompleted: ${exit.toolCalls.length} tool call(s), ${exit.usage.totalTokens} tokens\nanswer: ${exit.text}`
    )
    : Console.log(
      `\npaused (${exit.kind}):\n${
        exit.pending.map((p) =>
          `  ${p.call.id} ${p.call.name}(${short(p.call.args)})${p.error === undefined ? "" : ` failed: ${p.error.message}`}`
        ).join("\n")
      }\n  checkpoint: ${JSON.stringify(exit.checkpoint).length} bytes of JSON, resumable in another process`
    )
