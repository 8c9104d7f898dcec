/**
 * A model that falls back through the models of an `ExecutionPlan` (`ChatModel.fallback`;
 * decisions 018, 019 and 164). Each step's Layer is built once, with the fallback's own Layer; each
 * call runs `Effect.withExecutionPlan` (a stream, `Stream.withExecutionPlan`) over the built
 * models. The plan owns the retries: each attempt runs with `RetriedByCaller` set (a model that
 * retries on its own makes one request), and a step's next attempt waits at least what its own
 * server's `Retry-After` asked. The service and the reference are passed in by `ChatModel.ts`,
 * which this module imports for types only.
 */
import type { Scope } from "effect"
import * as Context from "effect/Context"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import * as ExecutionPlan from "effect/ExecutionPlan"
import * as Layer from "effect/Layer"
import * as Schedule from "effect/Schedule"
import * as Stream from "effect/Stream"
import type { ChatModel, ChatResponse, ModelError, StreamPart } from "../ChatModel.js"
import { isTraced, modelAttributes } from "./traced.js"

type Service = ChatModel.Service

/** A plan whose steps provide a `ChatModel`, its `while` and `schedule` fed the failed call's `ModelError`. */
export type Plan<E, R> = ExecutionPlan.ExecutionPlan<{ provides: ChatModel; input: ModelError; error: E; requirements: R }>

type Step<R> = Plan<unknown, R>["steps"][number]

/** What a built step keeps: its model in a context, and its rules with their requirements provided. */
interface Built {
  readonly context: Context.Context<ChatModel>
  readonly model: Service
  readonly attempts: number | undefined
  readonly while: ((error: ModelError) => Effect.Effect<boolean>) | undefined
  readonly schedule: Schedule.Schedule<any, ModelError, unknown> | undefined
}

/** The response stamped with who answered: what the step's adapter said of itself, unless the response says more. */
const stamp = (model: Service) => (response: ChatResponse): ChatResponse =>
  (response.model !== undefined || model.model === undefined) && (response.provider !== undefined || model.provider === undefined)
    ? response
    : { ...response, model: response.model ?? model.model, provider: response.provider ?? model.provider }

/** The reference an attempt sets: the plan retries, the model makes one request (`ChatModel.RetriedByCaller`). */
type ByCaller = Context.Reference<boolean>

/**
 * The model each failed attempt's error came from: a step waits for the `Retry-After` of its own
 * model's server, not for one another step's server sent.
 */
const failedOn = new WeakMap<ModelError, Service>()

const remember = (model: Service) => (error: ModelError) => Effect.sync(() => void failedOn.set(error, model))

/**
 * One attempt on one step's model (the one in context), in its own span when the fiber is traced,
 * named for that model; the model is told that the plan retries (`byCaller`), and a failure is
 * marked with the model it came from.
 */
const attempt = <A>(
  tag: typeof ChatModel,
  byCaller: ByCaller,
  call: (model: Service) => Effect.Effect<A, ModelError>
): Effect.Effect<A, ModelError, ChatModel> =>
  Effect.flatMap(tag, (model) =>
    Effect.withFiber<A, ModelError>((fiber) => {
      const once = Effect.tapError(Effect.provideService(call(model), byCaller, true), remember(model))
      return isTraced(fiber) ? Effect.withSpan(once, AttemptSpan, { attributes: modelAttributes(model), captureStackTrace: false }) : once
    }))

/** {@link attempt}, streamed. */
const attemptStream = <A>(
  tag: typeof ChatModel,
  byCaller: ByCaller,
  call: (model: Service) => Stream.Stream<A, ModelError>
): Stream.Stream<A, ModelError, ChatModel> =>
  Stream.unwrap(Effect.flatMap(tag, (model) =>
    Effect.withFiber<Stream.Stream<A, ModelError>>((fiber) => {
      const once = Stream.tapError(Stream.provideService(call(model), byCaller, true), remember(model))
      return Effect.succeed(
        isTraced(fiber) ? Stream.withSpan(once, AttemptSpan, { attributes: modelAttributes(model), captureStackTrace: false }) : once
      )
    })))

const AttemptSpan = "agentfx.model.attempt"

/** A step (its requirements captured) built in the Layer's scope: a Layer once; a `while` that fails is a defect. */
const build = (step: Step<never>, tag: typeof ChatModel) =>
  Effect.map(
    Context.isContext(step.provide) ? Effect.succeed(step.provide) : Layer.build(step.provide as Layer.Layer<ChatModel, unknown>),
    (built): Built => {
      const own = step.while
      return {
        context: built,
        model: Context.get(built, tag),
        attempts: step.attempts,
        while: own === undefined ? undefined : (error) => Effect.orDie(own(error)),
        schedule: step.schedule
      }
    }
  )

/** How long `error` asks to wait before its model is tried again, when it came from `model` (else 0: another server asked). */
const ownRetryAfter = (error: ModelError, model: Service): number =>
  failedOn.get(error) === model ? Math.max(0, error.retryAfterMillis ?? 0) : 0

/**
 * A step's schedule, each delay raised to the `Retry-After` its own model's server asked for. A
 * step with `attempts` but no schedule retries at once (`ExecutionPlan`'s rule), unless its server
 * asked for a wait. `undefined`: the step has no schedule to raise (it is tried once).
 */
const scheduleOf = (step: Built): Schedule.Schedule<any, ModelError, unknown> | undefined => {
  const base = step.schedule ?? (step.attempts !== undefined && step.attempts > 1 ? Schedule.forever : undefined)
  return base === undefined ? undefined : base.pipe(
    Schedule.setInputType<ModelError>(),
    Schedule.modifyDelay(({ duration, input }) => Effect.succeed(Duration.max(duration, Duration.millis(ownRetryAfter(input, step.model)))))
  )
}

/**
 * The plan over the built steps. A step's model is not tried again when its server asked for a
 * wait longer than `maxRetryAfterMillis` (the plan moves on); else its `while` decides. `guard` (a
 * stream's) refuses any retry and fallback once it says no.
 */
const planOf = (steps: ReadonlyArray<Built>, maxRetryAfterMillis: number, guard?: () => boolean) =>
  ExecutionPlan.make(...steps.map((step) => ({
    provide: step.context,
    attempts: step.attempts,
    schedule: scheduleOf(step),
    while: (error: ModelError) =>
      (guard !== undefined && !guard()) || ownRetryAfter(error, step.model) > maxRetryAfterMillis
        ? Effect.succeed(false)
        : step.while === undefined
        ? Effect.succeed(true)
        : step.while(error)
  })) as unknown as [ExecutionPlan.make.Step]) as unknown as Plan<never, never>

/**
 * The fallback's service. `generate` tries the plan's steps in order, each as its `attempts`,
 * `while` and `schedule` say. `stream` does the same until the first part reaches the caller:
 * after that, a failure ends the stream, on no other model (decision 019). It streams when any
 * step streams; it names itself after its first step.
 */
export const make = <E, R>(
  tag: typeof ChatModel,
  notStreaming: symbol,
  byCaller: ByCaller,
  plan: Plan<E, R>,
  options?: { readonly maxRetryAfter?: Duration.Input | undefined }
): Layer.Layer<ChatModel, E, Exclude<R, Scope.Scope>> =>
  Layer.effect(
    tag,
    Effect.gen(function*() {
      const captured = yield* plan.captureRequirements
      const steps: ReadonlyArray<Built> = yield* Effect.forEach(captured.steps, (step) => build(step as Step<never>, tag)) as Effect.Effect<
        ReadonlyArray<Built>,
        E,
        R | Scope.Scope
      >
      const maxRetryAfterMillis = Duration.toMillis(options?.maxRetryAfter ?? "60 seconds")
      const whole = planOf(steps, maxRetryAfterMillis)
      const service: Service = {
        model: steps[0]!.model.model,
        provider: steps[0]!.model.provider,
        generate: (request) =>
          Effect.withExecutionPlan(attempt(tag, byCaller, (model) => Effect.map(model.generate(request), stamp(model))), whole),
        stream: (request) =>
          Stream.suspend(() => {
            let emitted = false
            const parts = attemptStream(tag, byCaller, (model) =>
              model.stream(request).pipe(
                Stream.map((part): StreamPart => part._tag === "Done" ? { _tag: "Done", response: stamp(model)(part.response) } : part),
                Stream.tap(() => Effect.sync(() => void (emitted = true)))
              ))
            return Stream.withExecutionPlan(parts, planOf(steps, maxRetryAfterMillis, () => !emitted), { preventFallbackOnPartialStream: true })
          })
      }
      return steps.every((step) => notStreaming in step.model) ? { ...service, [notStreaming]: true as const } : service
    })
  ) as Layer.Layer<ChatModel, E, Exclude<R, Scope.Scope>>
