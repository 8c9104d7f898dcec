/**
 * The cluster bench's agent. Its input picks the run:
 * - `<n>`: a 3-step run with one approval — `lookup`, then `transfer` (needs approval: the run
 *   pauses), then the answer;
 * - `render <n>`: `render` (idempotent, 4 s), then `lookup`, then the answer (the failover
 *   scenarios kill or stop the runner mid-render).
 * Tools count their executions per call id in the runner process; `render` and every tool of a
 * failover run (`report`) print `{"started"|"ended": call id, "pid", "at": ms since the epoch}`.
 */
import { Agent, type ChatModel, type Message, ScriptedChatModel, Tool } from "@agentfx/core"
import type { Layer } from "effect"
import { Effect, Schema } from "effect"

/** Executions per call id, in this process. */
export const executions = new Map<string, number>()

/** Prints `event` of `callId` with this process's id and the time, as a JSON line. */
const print = (event: "started" | "ended", callId: string) =>
  Effect.sync(() => process.stdout.write(`${JSON.stringify({ [event]: callId, pid: process.pid, at: Date.now() })}\n`))

const counted = (name: string, options: { readonly needsApproval?: boolean; readonly idempotent?: boolean; readonly sleep?: number } = {}) =>
  Tool.make(name, {
    description: `Tool ${name}`,
    parameters: Schema.Struct({}),
    success: Schema.String,
    needsApproval: options.needsApproval ?? false,
    idempotent: options.idempotent ?? false,
    handler: (_, call) =>
      Effect.gen(function*() {
        executions.set(call.callId, (executions.get(call.callId) ?? 0) + 1)
        const report = call.callId.startsWith("r-")
        if (report) yield* print("started", call.callId)
        if (options.sleep !== undefined) yield* Effect.sleep(options.sleep)
        if (report) yield* print("ended", call.callId)
        return `${name} done in ${process.pid}`
      })
  })

export const benchAgent = Agent.make({
  name: "bench",
  tools: [counted("lookup"), counted("transfer", { needsApproval: true }), counted("render", { idempotent: true, sleep: 4_000 })]
})

/** The model of {@link benchAgent}; call ids carry the run's number (`r-` in the runs of the failover scenarios). */
export const benchModel: Layer.Layer<ChatModel.ChatModel | ScriptedChatModel.ScriptedChatModel> = ScriptedChatModel.layer((request) => {
  const last = request.messages.at(-1)
  const input = request.messages.find((m): m is Message.UserMessage => m._tag === "User")?.text ?? ""
  const [first, second] = input.split(" ")
  const render = first === "render"
  const id = render ? `r-${second}` : first!.startsWith("r-") ? first! : `b-${first}`
  if (last?._tag === "User") return ScriptedChatModel.toolCalls({ id: `${id}-${render ? "render" : "lookup"}`, name: render ? "render" : "lookup", args: {} })
  if (last?._tag === "ToolResult" && last.toolName === "render") return ScriptedChatModel.toolCalls({ id: `${id}-lookup`, name: "lookup", args: {} })
  if (last?._tag === "ToolResult" && last.toolName === "lookup" && !render) return ScriptedChatModel.toolCalls({ id: `${id}-transfer`, name: "transfer", args: {} })
  return ScriptedChatModel.text(`done: ${request.messages.flatMap((m) => m._tag === "ToolResult" ? [JSON.stringify(m.content)] : []).join("; ")}`)
}, { recordRequests: false })
