/**
 * The JSON form of a paused run: everything needed to resume it later, in this process or
 * another one.
 *
 * @since 0.1.0
 */
import * as Schema from "effect/Schema"
import * as SchemaTransformation from "effect/SchemaTransformation"
import { Budget } from "./Budget.js"
import { Usage } from "./ChatModel.js"
import { JsonValue } from "./Json.js"
import { Message } from "./Message.js"
import { Outcome, ToolCall } from "./ToolCall.js"

/**
 * A run's own model settings (`RunOptions.settings`), as stored — and as a run's start carries
 * them to another process.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "@agentfx/core"
 *
 * Schema.is(Checkpoint.ModelSettings)({ temperature: 0, maxOutputTokens: 500 }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ModelSettings = Schema.Struct({
  temperature: Schema.optionalKey(Schema.Number),
  topP: Schema.optionalKey(Schema.Number),
  maxOutputTokens: Schema.optionalKey(Schema.Number),
  stop: Schema.optionalKey(Schema.Array(Schema.String)),
  parallelToolCalls: Schema.optionalKey(Schema.Boolean)
})

/**
 * A run's own context policy (`RunOptions.context`), as stored: without a summary model, which
 * a run's policy never names.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint, ContextWindow } from "@agentfx/core"
 *
 * Schema.is(Checkpoint.ContextPolicy)(ContextWindow.trim({ maxTokens: 8000 })) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ContextPolicy = Schema.Union([
  Schema.TaggedStruct("Full", {}),
  Schema.TaggedStruct("Trim", { maxTokens: Schema.Number }),
  Schema.TaggedStruct("Summarize", { maxTokens: Schema.Number, keepLast: Schema.Number, instructions: Schema.String })
])

/**
 * A tool choice other than `"auto"` (the default), as stored.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "@agentfx/core"
 *
 * Schema.is(Checkpoint.ToolChoice)({ tool: "search" }) // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const ToolChoice = Schema.Union([Schema.Literals(["none", "required"]), Schema.Struct({ tool: Schema.String })])

/**
 * The newest version of the checkpoint format, which this runtime writes when a checkpoint needs
 * it. Version 4 added files in the model's answers (assistant messages); version 3, files in
 * user messages, tool results and their outcomes, and the model's reasoning. A checkpoint is
 * written in the oldest version that holds it: version 4 only when an assistant message has files
 * (a runtime that reads version 3 at most then refuses it, rather than lose them), else version 3,
 * which that runtime reads too (decision 164). Versions 2, 3 and 4 are read ({@link AnyVersion});
 * a later one is refused.
 *
 * @example
 * ```ts
 * import { Checkpoint } from "@agentfx/core"
 *
 * const newest = (json: { readonly version: number }) => json.version === Checkpoint.version
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const version: 4 = 4

/**
 * The versions of the format this runtime reads: the ones it writes (3, and 4 for a checkpoint
 * with files in the model's answers), and the one it migrates when it reads it (2; {@link AnyVersion}).
 *
 * @example
 * ```ts
 * import { Checkpoint } from "@agentfx/core"
 *
 * Checkpoint.readableVersions.includes(2) // true
 * ```
 *
 * @since 0.1.0
 * @category constants
 */
export const readableVersions: ReadonlyArray<number> = [2, 3, version]

/**
 * What the gate said of a call that has no outcome yet: it may run (`proceed`), or a person
 * must decide (`pause`). On resume, only calls that may run, or that the decision approved,
 * run: a call with neither runs nowhere.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "@agentfx/core"
 *
 * Schema.is(Checkpoint.Verdict)("proceed") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Verdict = Schema.Literals(["proceed", "pause"])

/**
 * One call of the batch the run paused in: its outcome when it already has one (executed,
 * rejected or answered by a gate), else the gate's verdict — for a call it paused, with the
 * `why` the gate gave (`Gate.pause({ why })`), shown to the person who decides. Stored as
 * `reason`, the key checkpoints have always had (decision 166).
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "@agentfx/core"
 *
 * Schema.decodeUnknownSync(Checkpoint.BatchItem)({
 *   call: { id: "c1", name: "get_weather", args: { city: "Oslo" } },
 *   verdict: "proceed"
 * })
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const BatchItem = Schema.Struct({
  call: ToolCall,
  outcome: Schema.optional(Outcome),
  verdict: Schema.optional(Verdict),
  why: Schema.optional(Schema.String)
}).pipe(Schema.encodeKeys({ why: "reason" }))

/**
 * @since 0.1.0
 * @category models
 */
export interface BatchItem extends Schema.Schema.Type<typeof BatchItem> {}

/**
 * The kind of stop the checkpoint is of: a person must approve calls, the environment must be
 * fixed, or the iteration budget ran out (`MaxIterationsReached`), or a limit of the run's
 * budget was reached (`BudgetExceeded`). `running`: not a pause — the batch a run
 * of a durable store is executing, recorded for its recovery.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "@agentfx/core"
 *
 * Schema.is(Checkpoint.Kind)("environment") // true
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Kind = Schema.Literals(["approval", "environment", "max-iterations", "budget", "running"])

/**
 * @since 0.1.0
 * @category models
 */
export type Kind = typeof Kind.Type

const fields = {
  format: Schema.Literal("agentfx/checkpoint"),
  version: Schema.Literals([3, version]),
  agent: Schema.String,
  tools: Schema.Array(Schema.String),
  runId: Schema.String,
  revision: Schema.Int,
  pausedAt: Schema.Number,
  conversationId: Schema.String,
  ephemeral: Schema.Boolean,
  kind: Kind,
  iteration: Schema.Int,
  modelCalls: Schema.Int,
  outputRetries: Schema.optional(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))),
  budget: Schema.optional(Budget),
  settings: Schema.optional(ModelSettings),
  toolChoice: Schema.optional(ToolChoice),
  context: Schema.optional(ContextPolicy),
  messages: Schema.Array(Message),
  batch: Schema.Array(BatchItem),
  pending: Schema.Array(Schema.String),
  state: Schema.Record(Schema.String, JsonValue),
  usage: Usage,
  outcomes: Schema.Array(Outcome),
  signature: Schema.optional(Schema.String)
}

/** The key the stored form gives each field renamed since (decision 166). */
const storedKeys = { kind: "reason" } as const

/**
 * The checkpoint schema. Its encoded form is plain JSON: a copy of the run's record in the
 * `RunStore`, which stays the authority — resume by run id, or give the copy to `Agent.resume`
 * in another process (it is imported into that process's store on first use). `revision` is
 * the record's version at the pause: an older copy of a run that moved on is refused.
 * `pausedAt` (milliseconds on the run store's clock, `RunStore.now`) bounds how long a copy can be imported. Pending calls keep
 * the model's **encoded** arguments; they are decoded with the tool's schema when they
 * execute. `state` holds each slot's value encoded with the slot's schema. `settings` are the
 * run's own model settings (`RunOptions.settings`; the agent's are merged under them when the
 * run goes on); `toolChoice` is the tool choice of the run's next model call when it is not
 * `"auto"` — only a run that has not made its first model call has one (decision 062);
 * `context` is the run's own context policy (`RunOptions.context`). `outputRetries` counts the
 * final answers already fed back for not matching the agent's `output` (absent: none — a
 * checkpoint written before the field reads as 0), so that a resume does not grant
 * `outputRetries` anew. `messages` is the whole
 * history, `Compaction` entries included: what the model was sent is its `ContextWindow.view`.
 * `signature` is an HMAC-SHA256 over all of it when the agent has a `checkpointSecret`.
 * `kind` is stored as `reason`, the key every checkpoint has had: the JSON of a checkpoint (and
 * of its batch's items: `why` as `reason`) is the same as before decision 166, so stores,
 * signatures and older runtimes read it as they did.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "@agentfx/core"
 *
 * const isCheckpoint = Schema.is(Schema.toEncoded(Checkpoint.Checkpoint))
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const Checkpoint = Schema.Struct(fields).pipe(Schema.encodeKeys(storedKeys)).annotate({ identifier: "Checkpoint" })

/**
 * A decoded checkpoint.
 *
 * @since 0.1.0
 * @category models
 */
export interface Checkpoint extends Schema.Schema.Type<typeof Checkpoint> {}

/**
 * A checkpoint as JSON: what `Paused.checkpoint` holds and `Agent.resume` accepts
 * (`JSON.parse` output works as is).
 *
 * @since 0.1.0
 * @category models
 */
export interface Encoded extends Schema.Codec.Encoded<typeof Checkpoint> {}

/**
 * The checkpoint's fields as every readable version has them: version 2 is version 3 without
 * files and reasoning, which version 3 added as optional fields; version 4 is version 3 with
 * files in assistant messages, an optional field too.
 */
const Readable = Schema.Struct({ ...fields, version: Schema.Literals([2, 3, version]) }).pipe(Schema.encodeKeys(storedKeys))

/**
 * A checkpoint of any version this runtime reads ({@link readableVersions}), decoded as a
 * version it writes: a version-2 checkpoint is migrated on read (its version becomes 3; it has
 * no files and no reasoning); versions 3 and 4 are read as they are. What reads a run store's
 * records must use it: a run paused by an older runtime is still there. Encoding writes the
 * version decoded. `Agent.resume` checks a checkpoint's signature before the migration, on the
 * JSON as it was signed.
 *
 * @example
 * ```ts
 * import { Schema } from "effect"
 * import { Checkpoint } from "@agentfx/core"
 *
 * const read = Schema.decodeUnknownEffect(Checkpoint.AnyVersion) // a record's checkpoint, v2, v3 or v4
 * ```
 *
 * @since 0.1.0
 * @category schemas
 */
export const AnyVersion: Schema.Codec<Checkpoint, Schema.Codec.Encoded<typeof Readable>> = Readable.pipe(
  Schema.decodeTo(
    Schema.toType(Checkpoint),
    SchemaTransformation.transform({
      decode: (read) => ({ ...read, version: read.version === 2 ? 3 : read.version }),
      encode: (current) => current
    })
  )
).annotate({ identifier: "Checkpoint" })
