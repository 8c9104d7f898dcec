/**
 * A run's `AgentEvent`s as JSON, from the runner that drives it to the clients that watch it
 * (decision 171). Every field is carried as the core's schemas encode it; the exit of a
 * `RunCompleted` carries the run's state encoded with its slots' schemas and the answer with
 * the agent's `output` schema, which the watcher decodes with its own definition of the agent
 * (processes agree on an agent by its name).
 */
import type { Agent, AgentEvent } from "@agentfx/core"
import { ChatModel, Json, Message, Part, ToolCall, ToolError } from "@agentfx/core"
import { Effect, Schema } from "effect"

const meta = { runId: Schema.String, conversationId: Schema.String, timestamp: Schema.Number }
const Purpose = Schema.Literals(["answer", "compaction"])
const files = { files: Schema.optional(Schema.Array(Part.FilePart)) }

const Pending = Schema.Struct({
  call: ToolCall.ToolCall,
  error: Schema.optional(ToolError.ToolFailure),
  why: Schema.optional(Schema.String)
})

/** An `AgentEvent` with its exit's state and answer already encoded (as JSON). */
export const WireEvent = Schema.Union([
  Schema.TaggedStruct("RunStarted", { ...meta, agent: Schema.String, input: Schema.String, ...files }),
  Schema.TaggedStruct("RunResumed", { ...meta, agent: Schema.String, decision: Schema.String }),
  Schema.TaggedStruct("ModelCalled", { ...meta, iteration: Schema.Number, messages: Schema.Number, purpose: Purpose }),
  Schema.TaggedStruct("TextDelta", { ...meta, iteration: Schema.Number, text: Schema.String }),
  Schema.TaggedStruct("ModelResponded", {
    ...meta,
    iteration: Schema.Number,
    purpose: Purpose,
    text: Schema.String,
    toolCalls: Schema.Number,
    finishReason: ChatModel.FinishReason,
    usage: ChatModel.Usage,
    durationMillis: Schema.Number,
    model: Schema.optional(Schema.String),
    provider: Schema.optional(Schema.String),
    ...files
  }),
  Schema.TaggedStruct("ContextCompacted", {
    ...meta,
    iteration: Schema.Number,
    replaces: Schema.Number,
    summarized: Schema.Boolean,
    tokensBefore: Schema.Number,
    tokensAfter: Schema.Number
  }),
  Schema.TaggedStruct("BatchTruncated", {
    ...meta,
    iteration: Schema.Number,
    batchWidth: Schema.Number,
    calls: Schema.Number,
    notRun: Schema.Array(Schema.Struct({ callId: Schema.String, toolName: Schema.String }))
  }),
  Schema.TaggedStruct("ToolStarted", { ...meta, callId: Schema.String, toolName: Schema.String, args: Json.JsonValue }),
  Schema.TaggedStruct("ToolSucceeded", {
    ...meta,
    callId: Schema.String,
    toolName: Schema.String,
    value: Json.JsonValue,
    ...files,
    durationMillis: Schema.Number
  }),
  Schema.TaggedStruct("ToolFailed", { ...meta, callId: Schema.String, toolName: Schema.String, error: ToolError.ToolFailure, durationMillis: Schema.Number }),
  Schema.TaggedStruct("ToolTimedOut", {
    ...meta,
    callId: Schema.String,
    toolName: Schema.String,
    timeoutMillis: Schema.Number,
    durationMillis: Schema.Number
  }),
  Schema.TaggedStruct("RunPaused", {
    ...meta,
    exit: Schema.TaggedStruct("Paused", {
      runId: Schema.String,
      conversationId: Schema.String,
      kind: Schema.Literals(["approval", "environment"]),
      pending: Schema.Array(Pending),
      checkpoint: Json.JsonValue
    })
  }),
  Schema.TaggedStruct("RunCompleted", {
    ...meta,
    exit: Schema.TaggedStruct("Completed", {
      runId: Schema.String,
      conversationId: Schema.String,
      text: Schema.String,
      value: Schema.optional(Json.JsonValue),
      messages: Schema.Array(Message.Message),
      state: Schema.Record(Schema.String, Json.JsonValue),
      toolCalls: Schema.Array(ToolCall.Outcome),
      usage: ChatModel.Usage
    })
  })
])

type Wire = typeof WireEvent.Type

const toJson = Schema.encodeUnknownEffect(WireEvent)
const fromJson = Schema.decodeUnknownEffect(WireEvent)

/** Each slot's value through its schema (encoded to JSON, or decoded from it); a slot the agent lacks is left out. */
const slots = (agent: Agent.Any, state: { readonly [slot: string]: unknown }, direction: "encode" | "decode") =>
  Effect.forEach(Object.entries(state).filter(([name]) => Object.hasOwn(agent.slots, name)), ([name, value]) => {
    const schema = (agent.slots as Agent.Slots)[name]!.schema as Schema.Codec<unknown, unknown>
    return Effect.map(
      direction === "encode" ? Schema.encodeUnknownEffect(schema)(value) : Schema.decodeUnknownEffect(schema)(value),
      (converted) => [name, converted] as const
    )
  }).pipe(Effect.map(Object.fromEntries))

const output = (agent: Agent.Any, value: unknown, direction: "encode" | "decode") =>
  agent.output === undefined
    ? Effect.succeed(undefined)
    : direction === "encode"
    ? Schema.encodeUnknownEffect(agent.output.schema as Schema.Codec<unknown, unknown>)(value)
    : Schema.decodeUnknownEffect(agent.output.schema as Schema.Codec<unknown, unknown>)(value)

/**
 * `event` of a run of `agent` as JSON. A value no schema can encode could not have been
 * recorded either (the run failed on it): a defect.
 */
export const encode = (agent: Agent.Any, event: AgentEvent.AgentEvent): Effect.Effect<Json.JsonValue> =>
  Effect.gen(function*() {
    if (event._tag !== "RunCompleted") return (yield* toJson(event)) as Json.JsonValue
    const { value: answer, ...exit } = event.exit
    // an agent without an output schema answers `undefined`: no key at all on the wire (JSON has no undefined)
    const value = yield* output(agent, answer, "encode")
    return (yield* toJson({
      ...event,
      exit: { ...exit, state: yield* slots(agent, exit.state, "encode"), ...(value === undefined ? {} : { value }) }
    })) as Json.JsonValue
  }).pipe(Effect.orDie)

/** The event of `json`, a run of `agent`'s, as the runner encoded it; its exit's state and answer decoded with `agent`'s schemas. */
export const decode = (agent: Agent.Any, json: Json.JsonValue): Effect.Effect<AgentEvent.AgentEvent, Schema.SchemaError> =>
  Effect.gen(function*() {
    const wire: Wire = yield* fromJson(json)
    if (wire._tag !== "RunCompleted") return wire as AgentEvent.AgentEvent
    const { exit } = wire
    return {
      ...wire,
      exit: {
        ...exit,
        state: yield* slots(agent, exit.state, "decode"),
        value: exit.value === undefined ? undefined : yield* output(agent, exit.value, "decode")
      }
    } as AgentEvent.AgentEvent
  })
