/**
 * A tool that runs a child agent.
 */
import { Effect, Layer, Schema } from "effect"
import * as Agent from "../Agent.js"
import type * as AgentExit from "../AgentExit.js"
import type { ChatModel } from "../ChatModel.js"
import type * as Tool from "../Tool.js"
import { make } from "../Tool.js"
import * as ToolCallingManager from "../ToolCallingManager.js"
import { environment, semantic, transient } from "../ToolError.js"
import type { Resumption } from "./suspension.js"
import { DelegateAgentKey, ResumptionKey, suspend } from "./suspension.js"

/** Options of `Tool.delegate`. */
export interface DelegateOptions<S extends Agent.Slots, R> extends
  Pick<
    Tool.Options<{ readonly input: string }, { readonly input: string }, string, string, never>,
    "description" | "timeout" | "retry" | "serial" | "returnDirect" | "sensitive" | "tags"
  >
{
  /** The child agent. It runs on an ephemeral conversation, removed when its run ends or is interrupted. */
  readonly agent: Agent.Agent<S, R>
  /**
   * The manager of the child's tool calls. Default: sequential, independent of the parent's
   * manager — a child holding its parent's bulkhead permit must not queue for another one.
   */
  readonly manager?: Layer.Layer<ToolCallingManager.ToolCallingManager, ToolCallingManager.InvalidManagerOptions>
}

const DelegateParameters = Schema.Struct({
  input: Schema.String.annotations({ description: "The task for the sub-agent, in plain language" })
})

/** See `Tool.delegate`. */
export const delegate = <const Name extends string, S extends Agent.Slots, R>(
  name: Name,
  options: DelegateOptions<S, R>
): Tool.Tool<Name, { readonly input: string }, string, R | ChatModel> => {
  const manager = options.manager ?? ToolCallingManager.sequential()
  const fail = (message: string) => `Sub-agent "${options.agent.name}": ${message}`
  const tool = make(name, {
    description: options.description,
    parameters: DelegateParameters,
    success: Schema.String,
    ...(options.timeout === undefined ? {} : { timeout: options.timeout }),
    ...(options.retry === undefined ? {} : { retry: options.retry }),
    ...(options.serial === undefined ? {} : { serial: options.serial }),
    ...(options.returnDirect === undefined ? {} : { returnDirect: options.returnDirect }),
    ...(options.sensitive === undefined ? {} : { sensitive: options.sensitive }),
    ...(options.tags === undefined ? {} : { tags: options.tags }),
    handler: ({ input }, context) => {
      const resumption = (context as { readonly [ResumptionKey]?: Resumption })[ResumptionKey]
      const childRun: Effect.Effect<AgentExit.AgentExit<any>, Agent.ResumeError, R | ChatModel> = resumption === undefined
        ? Agent.run(options.agent, { input })
        : Agent.resume(options.agent, resumption.checkpoint, resumption.decision)
      return childRun.pipe(
        Effect.provide(Layer.orDie(manager)),
        // A paused child suspends the call: the executor recognises the suspension (it is not a string).
        Effect.map((exit) => exit._tag === "Completed" ? exit.text : suspend(exit) as unknown as string),
        Effect.catchAll((error) => {
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
  return Object.assign(tool, { [DelegateAgentKey]: options.agent })
}
