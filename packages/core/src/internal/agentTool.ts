/**
 * An agent as a tool: the model sends `{ input }`, the child agent's answer is the result.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import type * as Agent from "../Agent.js"
import type { ResumeError } from "../AgentError.js"
import type * as AgentExit from "../AgentExit.js"
import type { ChatModel } from "../ChatModel.js"
import type * as Decision from "../Decision.js"
import type * as Tool from "../Tool.js"
import { make } from "../Tool.js"
import * as ToolCallingManager from "../ToolCallingManager.js"
import { environment, semantic, transient } from "../ToolError.js"
import { resumeRun } from "./resumeRun.js"
import { startRun } from "./run.js"
import type { Resumption } from "./suspension.js"
import { DelegateAgentKey, ResumptionKey, suspend } from "./suspension.js"

/** Options of `Agent.toTool`. */
export interface ToolOptions extends
  Pick<
    Tool.Options<{ readonly input: string }, { readonly input: string }, string, string, never>,
    "description" | "timeout" | "retry" | "serial" | "returnDirect" | "idempotent" | "needsApproval" | "tags"
  >
{
  /** The tool's name, as the parent's model sees it. */
  readonly name: string
  /**
   * The manager of the child's tool calls. Default: sequential, independent of the parent's
   * manager — a child holding its parent's bulkhead permit must not queue for another one.
   */
  readonly manager?: Layer.Layer<never, ToolCallingManager.InvalidManagerOptions>
}

const Parameters = Schema.Struct({
  input: Schema.String.annotate({ description: "The task for the sub-agent, in plain language" })
})

/** See `Agent.toTool`. */
export const toTool = <S extends Agent.Slots, R>(
  agent: Agent.Agent<S, R>,
  options: ToolOptions
): Tool.Tool<string, { readonly input: string }, string, R | ChatModel> => {
  const manager = options.manager ?? ToolCallingManager.sequential()
  const fail = (message: string) => `Sub-agent "${agent.name}": ${message}`
  const { manager: _, name, ...toolOptions } = options
  const tool = make(name, {
    ...toolOptions,
    parameters: Parameters,
    success: Schema.String,
    handler: ({ input }, context) => {
      const resumption = (context as { readonly [ResumptionKey]?: Resumption })[ResumptionKey]
      const childRun = (resumption === undefined
        ? startRun(agent, { input })
        : resumeRun(agent, resumption.checkpoint, resumption.decision as Decision.Decision, {})) as Effect.Effect<
          AgentExit.AgentExit,
          ResumeError,
          R | ChatModel
        >
      return childRun.pipe(
        Effect.provide(Layer.orDie(manager)),
        // A paused child suspends the call: the executor recognises the suspension (it is not a string).
        Effect.map((exit) => exit._tag === "Completed" ? exit.text : suspend(exit) as unknown as string),
        Effect.catch((error) => {
          switch (error._tag) {
            case "ModelError":
              return Effect.fail((error.isTransient ? transient : semantic)(fail(error.message)))
            case "MemoryError":
              return Effect.fail(environment(fail(error.message)))
            default:
              return Effect.fail(semantic(fail(error.message)))
          }
        })
      )
    }
  })
  return Object.assign(tool, { [DelegateAgentKey]: agent })
}
