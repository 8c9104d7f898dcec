/**
 * One turn at a time per conversation, and what a turn does when another holds it (the agent's
 * `onConversationBusy`, decision 170): fail, wait, steer its input into the running turn, or
 * cancel that turn (interrupt, rollback). The conversation is held through the run store —
 * `lease("conversation:<id>")`: a keyed lock in memory, a lease in a shared store — and steered
 * inputs travel through the store's inbox (`RunStore.Steering`), so that every policy holds
 * across the processes that share a store.
 */
import type { Scope } from "effect"
import * as Deferred from "effect/Deferred"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Schema from "effect/Schema"
import type { Any, OnConversationBusy } from "../Agent.js"
import type { RunAlreadyResumed } from "../AgentError.js"
import type { ChatMemory, MemoryError } from "../ChatMemory.js"
import { Message, UserMessage } from "../Message.js"
import { ConversationBusy, type RunStore, type Steering, SteerRefused, Steered, steerId, StoreError, TurnInterrupted } from "../RunStore.js"
import { alreadyDecided, recorderOf } from "./record.js"
import type { RunState } from "./runState.js"
import { appendMessages } from "./runState.js"

const conversationKey = (run: RunState) => `conversation:${run.conversationId}`

/**
 * Holds the run's conversation for the turn's scope (its owner: the run id), or refuses: with
 * `RunAlreadyResumed` when the holder is this very run (a concurrent resume of it), else with
 * `ConversationBusy`. A conversation let go between the refusal and the look at its holder (a
 * shared store's lease is two statements apart) is tried again.
 */
export const holdConversation = (
  run: RunState,
  wait: boolean
): Effect.Effect<void, ConversationBusy | RunAlreadyResumed | StoreError, Scope.Scope> =>
  Effect.flatMap(holderOrHeld(run, wait), (holder) => holder === undefined ? Effect.void : Effect.fail(new ConversationBusy({ conversationId: run.conversationId })))

/**
 * The conversation held (`undefined`), or the id of the turn that holds it. Its own run as the
 * holder is `RunAlreadyResumed`; a conversation let go between the two looks is tried again.
 */
const holderOrHeld = (run: RunState, wait: boolean): Effect.Effect<string | undefined, RunAlreadyResumed | StoreError, Scope.Scope> => {
  const key = conversationKey(run)
  return Effect.flatMap(run.store.lease(key, { owner: run.runId, wait }), (held) =>
    held ? Effect.succeed(undefined) : Effect.flatMap(run.store.holder(key), (holder): Effect.Effect<string | undefined, RunAlreadyResumed | StoreError, Scope.Scope> =>
      Option.isNone(holder)
        ? holderOrHeld(run, wait)
        : holder.value === run.runId
        ? alreadyDecided(run.store, run.runId, "running")
        : Effect.succeed(holder.value)))
}

/** The messages of a cancelled turn, for a rollback: from its input, at `start` in the conversation. */
export interface CancelledTurn {
  readonly start: number
  readonly input: UserMessage
}

/**
 * Holds the run's conversation as `policy` says, for the turn's scope. `"steer"` may end the
 * turn before it starts: its input taken by the running turn (`Steered`), or refused because that
 * turn paused (`SteerRefused`). `"interrupt"` and `"rollback"` cancel the running turn first; a
 * rollback gets back where the cancelled turn's messages begin, when that turn ran in this process.
 */
export const holdFor = (
  agent: Any,
  run: RunState,
  input: UserMessage,
  policy: OnConversationBusy
): Effect.Effect<CancelledTurn | undefined, ConversationBusy | Steered | SteerRefused | RunAlreadyResumed | StoreError, Scope.Scope> => {
  switch (policy) {
    case "fail":
    case "wait":
      return Effect.as(holdConversation(run, policy === "wait"), undefined)
    case "steer":
      return Effect.as(steerOrHold(run, input), undefined)
    case "interrupt":
    case "rollback":
      return takeOver(agent, run, policy === "rollback")
  }
}

/**
 * The conversation held, or the input left for the turn holding it: taken by that turn
 * (`Steered`), or withdrawn once the conversation was let go — then refused when that turn paused
 * (`SteerRefused`: a steer never supersedes a pause), else this turn holds the conversation
 * itself. Taking and withdrawing are compare-and-sets of the store: never both. The input's id in
 * the inbox is named by the run's id and its conversation (`RunStore.steerId`): a start sent
 * again (a message redelivered after a crash) finds its input where the first left it — taken
 * (answered `Steered` again), or pending (followed, not offered twice) — and one that holds the
 * conversation withdraws it first.
 */
const steerOrHold = (run: RunState, input: UserMessage): Effect.Effect<void, ConversationBusy | Steered | SteerRefused | RunAlreadyResumed | StoreError, Scope.Scope> =>
  Effect.flatMap(holderOrHeld(run, false), (holder) => {
    const steering = run.store.steering
    if (steering === undefined) return holder === undefined ? Effect.void : Effect.fail(new ConversationBusy({ conversationId: run.conversationId }))
    const id = steerId(run.conversationId, run.runId)
    const key = conversationKey(run)
    const steered = (runId: string) => Effect.fail(new Steered({ conversationId: run.conversationId, runId }))
    if (holder === undefined) {
      return Effect.flatMap(steering.status(id), (status) =>
        status._tag === "withdrawn"
          ? Effect.void
          : status._tag === "taken"
          ? steered(status.runId)
          : Effect.flatMap(steering.withdraw(id), (after) => after._tag === "taken" ? steered(after.runId) : Effect.void))
    }
    /** Waits for the input to be taken, or the conversation let go of; `last`: the holder seen last. */
    const follow = (last: string): Effect.Effect<void, ConversationBusy | Steered | SteerRefused | RunAlreadyResumed | StoreError, Scope.Scope> =>
      Effect.flatMap(steering.changed(id, run.conversationId), () =>
        Effect.flatMap(steering.status(id), (status) => {
          if (status._tag === "taken") return steered(status.runId)
          return Effect.flatMap(run.store.holder(key), (now) =>
            Option.isSome(now) && status._tag === "pending"
              ? follow(now.value)
              : Effect.flatMap(steering.withdraw(id), (after) =>
                after._tag === "taken"
                  ? steered(after.runId)
                  : Effect.flatMap(run.store.get(last), (record) =>
                    Option.isSome(record) && record.value.status === "paused"
                      ? Effect.fail(new SteerRefused({ conversationId: run.conversationId, runId: last }))
                      : steerOrHold(run, input))))
        }))
    return Effect.flatMap(steering.status(id), (status) =>
      status._tag === "taken"
        ? steered(status.runId)
        : status._tag === "pending"
        ? follow(holder)
        : Effect.andThen(steering.offer({ id, conversationId: run.conversationId, message: encodeUser(input) }), follow(holder)))
  })

const encodeUser = Schema.encodeSync(UserMessage)
const decodeUser = Schema.decodeUnknownEffect(UserMessage)

/**
 * Before a model call of a turn whose agent steers: the inputs steered into its conversation
 * since, added to its history (and memory) in the order they came — after the results of the
 * batch before, never between a model answer and its results. A durable run writes them with its
 * record (its history so far, and the turn's unwritten messages) in one step with the take, so
 * that a process that dies in the model call after does not lose them: the run recovered from its
 * record has them; a write refused (the run was taken over) takes nothing.
 */
export const takeSteered = (agent: Any, run: RunState, steering: Steering): Effect.Effect<void, StoreError | MemoryError | RunAlreadyResumed, any> =>
  steering.take(run.conversationId, run.runId, (taken) =>
    Effect.flatMap(
      Effect.forEach(taken, ({ message }) => decodeUser(message)).pipe(
        Effect.mapError((error) => new StoreError({ message: `a steered input could not be read: ${error.message}` }))
      ),
      (messages: ReadonlyArray<Message>) =>
        Effect.andThen(appendMessages(run, messages), run.recorder.durable ? run.recorder.batch(agent, run, []) : Effect.void)
    ))

/** A turn of this process that a newer input may cancel (the agent's policy is `"interrupt"` or `"rollback"`). */
interface LiveTurn {
  readonly cancel: Deferred.Deferred<{ readonly by: string; readonly rollback: boolean }>
  readonly turn: CancelledTurn
}

/** The cancellable turns of this process, per store (processes sharing a store cancel each other's through it). */
const liveTurns = new WeakMap<RunStore.Service, Map<string, LiveTurn>>()

const liveOf = (store: RunStore.Service): Map<string, LiveTurn> => {
  let live = liveTurns.get(store)
  if (live === undefined) liveTurns.set(store, live = new Map())
  return live
}

/**
 * The turn's body, cancellable by a newer input on its conversation: it races the cancel signal,
 * which interrupts the body (its tools' finalizers run) and fails the turn with `TurnInterrupted`.
 * `turn`: where its messages begin, for a rollback. A newer input of another process cancels the
 * turn through its record (`run <id>` decided it failed): the turn finds out at its next write,
 * and fails with `TurnInterrupted` too — rolled back when its agent's policy is `"rollback"` (the
 * newer turn removes its messages: `cancelElsewhere`).
 */
export const cancellable = <A, E, R>(
  run: RunState,
  turn: CancelledTurn,
  rollback: boolean,
  body: Effect.Effect<A, E, R>
): Effect.Effect<A, E | TurnInterrupted | StoreError, R> =>
  Effect.suspend(() => {
    const live = liveOf(run.store)
    const cancel = Deferred.makeUnsafe<{ readonly by: string; readonly rollback: boolean }>()
    const interrupted = (by: string, rolledBack: boolean) =>
      new TurnInterrupted({ runId: run.runId, conversationId: run.conversationId, by, rolledBack })
    live.set(run.runId, { cancel, turn })
    return Effect.raceFirst(
      Effect.catchIf(
        body,
        (error): error is E & RunAlreadyResumed => (error as { readonly _tag?: unknown })._tag === "RunAlreadyResumed",
        (error) =>
          Effect.flatMap(run.store.get(run.runId), (record) => {
            const by = Option.isSome(record) && record.value.status === "failed" ? cancelledBy(record.value.decidedBy) : undefined
            return Effect.fail(by === undefined ? error : interrupted(by, rollback))
          })
      ),
      Effect.flatMap(Deferred.await(cancel), ({ by, rollback }) => Effect.fail(interrupted(by, rollback)))
    ).pipe(Effect.ensuring(Effect.sync(() => live.delete(run.runId))))
  })

/** How a newer turn names itself in the record of the turn it cancels (`decidedBy`), and back. */
const cancelledByRun = (runId: string) => `run ${runId}`
const cancelledBy = (decidedBy: string | undefined): string | undefined =>
  decidedBy !== undefined && decidedBy.startsWith("run ") ? decidedBy.slice(4) : undefined

/**
 * Holds the conversation, cancelling the turn that holds it first: a turn of this process is
 * signalled (its body interrupted at once); one of another process sharing the store is cancelled
 * through its record (`Agent.cancel`: it stops at its next write), and its lease is waited for.
 * What the cancelled turn wrote is healed by this turn (calls cut off answered "cancelled"), or
 * removed for a rollback: the turn returned says from where.
 */
const takeOver = (
  agent: Any,
  run: RunState,
  rollback: boolean
): Effect.Effect<CancelledTurn | undefined, RunAlreadyResumed | StoreError, Scope.Scope> =>
  Effect.flatMap(holderOrHeld(run, false), (holder) => {
    if (holder === undefined) return Effect.succeed(undefined)
    const here = liveOf(run.store).get(holder)
    const cancelled = here !== undefined
      ? Effect.as(Deferred.succeed(here.cancel, { by: run.runId, rollback }), here.turn)
      : cancelElsewhere(agent, run.store, holder, run.runId, rollback)
    return Effect.flatMap(cancelled, (turn) => Effect.as(run.store.lease(conversationKey(run), { owner: run.runId, wait: true }), turn))
  })

/**
 * Cancels a running turn through its record (it stops at its next write); one that ended
 * meanwhile, or that the store does not know, is left as it is. For a rollback, where the turn's
 * messages begin, read from its record: its checkpoint's history ends with what the turn added
 * since its input (its agent steers nothing in: the input is the history's last user message).
 * A turn resumed from a pause is not rolled back (as in one process: only a start is cancellable).
 */
const cancelElsewhere = (
  agent: Any,
  store: RunStore.Service,
  runId: string,
  by: string,
  rollback: boolean
): Effect.Effect<CancelledTurn | undefined, StoreError> =>
  Effect.flatMap(store.get(runId), (record) =>
    Option.isNone(record) || record.value.agent !== agent.name || record.value.status !== "running"
      ? Effect.succeed(undefined)
      : Effect.as(
        Effect.catchTag(recorderOf(store).cancel(record.value, cancelledByRun(by)), "RunAlreadyResumed", () => Effect.void),
        rollback && record.value.decidedBy === undefined ? turnOf(record.value.checkpoint) : undefined
      ))

const decodeHistory = Schema.decodeUnknownOption(Schema.Struct({ messages: Schema.Array(Message) }))

/** Where a running turn's messages begin, from its record's checkpoint; `undefined` when it cannot be read. */
const turnOf = (checkpoint: unknown): CancelledTurn | undefined => {
  const history = decodeHistory(checkpoint)
  if (Option.isNone(history)) return undefined
  const messages = history.value.messages
  for (let start = messages.length - 1; start >= 0; start--) {
    const message = messages[start]!
    if (message._tag === "User") return { start, input: message }
  }
  return undefined
}

/**
 * Removes a cancelled turn's messages from the conversation (a rollback), once its turn let go
 * of it: from its input on. Nothing when the conversation no longer has that input where the
 * turn began (another turn ran in between): only the cancelled turn's messages are ever removed.
 */
export const rollBack = (memory: ChatMemory.Service, conversationId: string, turn: CancelledTurn) =>
  Effect.flatMap(memory.get(conversationId), (messages) => {
    const first = messages[turn.start]
    return first !== undefined && first._tag === "User" && JSON.stringify(encodeUser(first)) === JSON.stringify(encodeUser(turn.input))
      ? memory.replace(conversationId, messages.slice(0, turn.start))
      : Effect.void
  })
