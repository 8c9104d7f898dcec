/**
 * Encoding, signing, verifying and decoding checkpoints.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Redacted from "effect/Redacted"
import * as Schema from "effect/Schema"
import { createHmac, timingSafeEqual } from "node:crypto"
import { InvalidCheckpoint } from "../AgentError.js"
import * as Checkpoint from "../Checkpoint.js"
import { JsonValue } from "../Json.js"
import type * as Slot from "../Slot.js"
import type { Message } from "../Message.js"
import { depthOf } from "./admit.js"
import { contextProblems, settingsProblems, toolChoiceProblems } from "./assemble.js"
import { describeParseError } from "./parseError.js"

/** What checkpoint handling needs to know of an agent. */
export interface CheckpointOwner {
  readonly name: string
  readonly limits: { readonly depth: number }
  readonly toolNames: ReadonlyArray<string>
  readonly slots: { readonly [name: string]: Slot.Any }
  readonly checkpointSecret: Redacted.Redacted<string> | undefined
}

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortKeys((value as any)[key])]))
  }
  return value
}

/** HMAC-SHA256 over the checkpoint's canonical JSON (sorted keys, no signature): stable across stores that reorder keys. */
const sign = (secret: Redacted.Redacted<string>, body: object): string => {
  const { signature: _, ...unsigned } = body as { signature?: unknown }
  return createHmac("sha256", Redacted.value(secret)).update(JSON.stringify(sortKeys(unsigned))).digest("base64url")
}

const sameSignature = (a: string, b: string): boolean => {
  const x = Buffer.from(a)
  const y = Buffer.from(b)
  return x.length === y.length && timingSafeEqual(x, y)
}

/** Encodes the run state slot by slot. */
export const encodeState = (owner: CheckpointOwner, state: { readonly [slot: string]: unknown }) =>
  Effect.forEach(
    Object.keys(owner.slots),
    (name) => Effect.map(Schema.encodeEffect(owner.slots[name]!.schema, { reportInput: true })(state[name]), (encoded) => [name, encoded] as const)
  ).pipe(Effect.map((entries) => Object.fromEntries(entries) as { readonly [slot: string]: JsonValue }))

/**
 * The oldest version of the format that holds `messages`: 4 when the model answered with files
 * (version 3 has no place for them, and a runtime that reads it would drop them), else 3, which
 * runtimes before version 4 read too (decision 164).
 */
const versionFor = (messages: ReadonlyArray<Message>): 3 | 4 =>
  messages.some((message) => message._tag === "Assistant" && message.files !== undefined) ? Checkpoint.version : 3

/** Encodes (and signs, when the agent has a secret) a checkpoint. A value that cannot be encoded is a defect of a tool or slot schema. */
export const encode = (
  owner: CheckpointOwner,
  checkpoint: Omit<Checkpoint.Checkpoint, "format" | "version" | "agent" | "tools" | "state" | "signature">,
  state: { readonly [slot: string]: unknown }
): Effect.Effect<Checkpoint.Encoded> =>
  Effect.gen(function*() {
    const encodedState = yield* encodeState(owner, state)
    const encoded = yield* Schema.encodeEffect(Checkpoint.Checkpoint)({
      ...checkpoint,
      format: "agentfx/checkpoint",
      version: versionFor(checkpoint.messages),
      agent: owner.name,
      tools: owner.toolNames,
      state: encodedState
    })
    return owner.checkpointSecret === undefined ? encoded : { ...encoded, signature: sign(owner.checkpointSecret, encoded) }
  }).pipe(
    Effect.mapError((error) => new Error(`The run state cannot be checkpointed as JSON: ${describeParseError(error)}`)),
    Effect.orDie
  )

const refuse = (reason: InvalidCheckpoint["reason"], detail: string) => Effect.fail(new InvalidCheckpoint({ reason, detail }))

const isJson = Schema.decodeUnknownResult(JsonValue)

/**
 * Decodes a checkpoint for `owner`, refusing foreign, tampered, malformed or unknown-version
 * ones; one of an older readable version is migrated to the current one once its signature
 * (over the JSON as it came) is checked.
 */
export const decode = (
  owner: CheckpointOwner,
  input: unknown
): Effect.Effect<{ readonly checkpoint: Checkpoint.Checkpoint; readonly state: { [slot: string]: unknown } }, InvalidCheckpoint> =>
  Effect.gen(function*() {
    if (typeof input !== "object" || input === null || (input as any).format !== "agentfx/checkpoint") {
      return yield* refuse("malformed", "not an agentfx checkpoint (expected format \"agentfx/checkpoint\")")
    }
    const raw = input as { readonly version?: unknown; readonly signature?: unknown }
    // a checkpoint nests messages, calls and the agent's state around arguments and results
    const depthLimit = owner.limits.depth + 256
    if (depthOf(input, depthLimit) > depthLimit) {
      return yield* refuse("malformed", `nested deeper than ${depthLimit} levels (the agent's depth limit and the checkpoint's own structure)`)
    }
    // a copy is JSON, as stores keep it and signatures cover it: a value JSON cannot carry (a BigInt, a function) is no copy
    const json = isJson(input)
    if (Result.isFailure(json)) return yield* refuse("malformed", `not JSON: ${describeParseError(json.failure)}`)
    if (typeof raw.version !== "number" || !Checkpoint.readableVersions.includes(raw.version)) {
      return yield* refuse(
        "version",
        `format version ${JSON.stringify(raw.version)} is not supported (this runtime reads versions ${Checkpoint.readableVersions.slice(0, -1).join(", ")} and ${Checkpoint.readableVersions.at(-1)})`
      )
    }
    // the signature is over the checkpoint as it was signed: an older version's is checked before it is migrated
    if (owner.checkpointSecret !== undefined) {
      if (typeof raw.signature !== "string") return yield* refuse("signature", "the checkpoint is not signed, and this agent requires a signature")
      if (!sameSignature(raw.signature, sign(owner.checkpointSecret, raw))) {
        return yield* refuse("signature", "the signature does not match: the checkpoint was altered or signed with another secret")
      }
    }
    const checkpoint = yield* Schema.decodeUnknownEffect(Checkpoint.AnyVersion, { reportInput: true })(input).pipe(
      Effect.catch((error) => refuse("malformed", describeParseError(error)))
    )
    // a run's calls have unique ids (the loop admits them so): a decision for one id decides one call
    const ids = new Set<string>()
    for (const { call } of checkpoint.batch) {
      if (ids.has(call.id)) return yield* refuse("malformed", `call id ${JSON.stringify(call.id)} appears twice in the batch`)
      ids.add(call.id)
    }
    if (checkpoint.agent !== owner.name) {
      return yield* refuse("agent", `the checkpoint belongs to agent "${checkpoint.agent}", not "${owner.name}"`)
    }
    const unknownTools = checkpoint.tools.filter((name) => !owner.toolNames.includes(name))
    if (unknownTools.length > 0) {
      return yield* refuse("tools", `this agent has no tool ${unknownTools.map((n) => `"${n}"`).join(", ")}`)
    }
    // an unsigned copy may carry anything: the run's settings, tool choice and context policy are checked as when it started
    const choices = [
      ...(checkpoint.settings === undefined ? [] : settingsProblems(checkpoint.settings, "settings")),
      ...(checkpoint.toolChoice === undefined ? [] : toolChoiceProblems(checkpoint.toolChoice, owner.toolNames)),
      ...(checkpoint.context === undefined ? [] : contextProblems(checkpoint.context, "context", 0, "run"))
    ]
    if (choices.length > 0) return yield* refuse("malformed", choices.join("; "))
    const unknownSlots = Object.keys(checkpoint.state).filter((name) => !Object.hasOwn(owner.slots, name))
    if (unknownSlots.length > 0) {
      return yield* refuse("state", `this agent has no slot ${unknownSlots.map((n) => `"${n}"`).join(", ")}`)
    }
    const state: { [slot: string]: unknown } = {}
    for (const [name, slot] of Object.entries(owner.slots)) {
      state[name] = Object.hasOwn(checkpoint.state, name)
        ? yield* Schema.decodeUnknownEffect(slot.schema, { reportInput: true })(checkpoint.state[name]).pipe(
          Effect.catch((error) => refuse("state", `slot "${name}": ${describeParseError(error)}`))
        )
        : slot.initial
    }
    return { checkpoint, state }
  })
