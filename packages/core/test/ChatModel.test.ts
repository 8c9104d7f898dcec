import { assert, describe, expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Exit, ExecutionPlan, Fiber, Layer, Option, Schedule, Stream, Tracer } from "effect"
import { TestClock } from "effect/testing"
import { Agent, type AgentEvent, ChatModel } from "../src/index.js"

const request: ChatModel.ChatRequest = { system: undefined, messages: [{ _tag: "User", text: "Hi" }], tools: [], toolChoice: "auto" }

const answer = (text: string): ChatModel.ChatResponse => ({ text, toolCalls: [], finishReason: "stop", usage: ChatModel.emptyUsage })

const unavailable = new ChatModel.ModelError({ reason: "unavailable", message: "HTTP 503", status: 503 })
const refused = new ChatModel.ModelError({ reason: "invalid-request", message: "HTTP 400", status: 400 })

/**
 * A model named `name` whose n-th call (generate or stream) does what `calls[n]` says (the last
 * one again past the end): answer, fail, die, or stream some text then fail.
 */
const fake = (name: string, calls: ReadonlyArray<"answer" | "unavailable" | "refused" | "die" | "text-then-unavailable">) => {
  const log: Array<string> = []
  const builds = { count: 0 }
  const next = () => calls[Math.min(log.length, calls.length - 1)]!
  const generate = (): Effect.Effect<ChatModel.ChatResponse, ChatModel.ModelError> =>
    Effect.suspend(() => {
      const what = next()
      log.push(what)
      switch (what) {
        case "answer":
          return Effect.succeed(answer(`${name} answers`))
        case "unavailable":
        case "text-then-unavailable":
          return Effect.fail(unavailable)
        case "refused":
          return Effect.fail(refused)
        case "die":
          return Effect.die(new Error(`${name} crashed`))
      }
    })
  const stream = (): Stream.Stream<ChatModel.StreamPart, ChatModel.ModelError> =>
    Stream.suspend(() => {
      const what = next()
      if (what !== "text-then-unavailable" && what !== "answer") return Stream.fromEffect(generate()).pipe(Stream.map((response) => ({ _tag: "Done", response }) as const))
      log.push(what)
      const text = `${name} answers`
      return what === "answer"
        ? Stream.make<Array<ChatModel.StreamPart>>({ _tag: "TextDelta", text: `${name} ` }, { _tag: "TextDelta", text: "answers" }, { _tag: "Done", response: answer(text) })
        : Stream.concat(Stream.make<Array<ChatModel.StreamPart>>({ _tag: "TextDelta", text: `${name} ` }), Stream.fail(unavailable))
    })
  const layer = Layer.effect(
    ChatModel.ChatModel,
    Effect.sync((): ChatModel.ChatModel.Service => {
      builds.count += 1
      return { model: name, provider: `${name}-provider`, generate, stream }
    })
  )
  return { log, builds, layer }
}

const isTransient = (error: ChatModel.ModelError) => error.isTransient

const generate = Effect.flatMap(ChatModel.ChatModel, (model) => model.generate(request))

const streamed = Effect.flatMap(ChatModel.ChatModel, (model) => Stream.runCollect(model.stream(request)))

describe("ChatModel.fallback", () => {
  it.effect("tries the first model as its step says (attempts, schedule, while), then the next; the response names the model that answered", () => {
    const primary = fake("primary", ["unavailable"])
    const secondary = fake("secondary", ["answer"])
    const Model = ChatModel.fallback(ExecutionPlan.make(
      { provide: primary.layer, attempts: 2, schedule: Schedule.spaced("1 second"), while: isTransient },
      { provide: secondary.layer }
    ))
    return Effect.gen(function*() {
      const fiber = yield* Effect.forkChild(generate)
      yield* TestClock.adjust("999 millis")
      expect(primary.log).toEqual(["unavailable"])
      yield* TestClock.adjust("1 millis")
      const response = yield* Fiber.join(fiber)
      expect(primary.log).toEqual(["unavailable", "unavailable"])
      expect(secondary.log).toEqual(["answer"])
      expect(response).toMatchObject({ text: "secondary answers", model: "secondary", provider: "secondary-provider" })
      // the service names itself after its first step
      const service = yield* ChatModel.ChatModel
      expect([service.model, service.provider]).toEqual(["primary", "primary-provider"])
    }).pipe(Effect.provide(Model))
  })

  it.effect("a step's while decides whether to fall back to it: a refused request ends the call with its error, the next model never asked", () => {
    const primary = fake("primary", ["refused"])
    const secondary = fake("secondary", ["answer"])
    const Model = ChatModel.fallback(ExecutionPlan.make(
      { provide: primary.layer, attempts: 3, while: isTransient },
      { provide: secondary.layer, while: (error: ChatModel.ModelError) => error.reason !== "invalid-request" }
    ))
    return Effect.gen(function*() {
      const error = yield* Effect.flip(generate)
      expect(error).toBe(refused)
      expect([primary.log, secondary.log]).toEqual([["refused"], []])
    }).pipe(Effect.provide(Model))
  })

  it("a plan whose steps judge something else than a ModelError does not compile", () => {
    const step = fake("m", ["answer"]).layer
    // @ts-expect-error: a step's while must take the failed call's ModelError
    const layer = ChatModel.fallback(ExecutionPlan.make({ provide: step, while: (error: string) => error.length > 0 }))
    expect(Layer.isLayer(layer)).toBe(true)
  })

  it.effect("only typed failures move the plan on: a model that dies ends the call", () => {
    const primary = fake("primary", ["die"])
    const secondary = fake("secondary", ["answer"])
    return Effect.gen(function*() {
      const exit = yield* Effect.exit(generate)
      assert(Exit.isFailure(exit))
      expect(exit.cause.reasons.map((reason) => reason._tag)).toEqual(["Die"])
      expect(secondary.log).toEqual([])
    }).pipe(Effect.provide(ChatModel.fallback(ExecutionPlan.make({ provide: primary.layer }, { provide: secondary.layer }))))
  })

  it.effect("each step's Layer is built once, with the fallback's Layer, not per call", () => {
    const primary = fake("primary", ["unavailable", "answer", "unavailable"])
    const secondary = fake("secondary", ["answer"])
    return Effect.gen(function*() {
      const texts = yield* Effect.forEach([1, 2, 3], () => Effect.map(generate, (response) => response.text))
      expect(texts).toEqual(["secondary answers", "primary answers", "secondary answers"])
      expect([primary.builds.count, secondary.builds.count]).toEqual([1, 1])
    }).pipe(Effect.provide(ChatModel.fallback(ExecutionPlan.make({ provide: primary.layer }, { provide: secondary.layer }))))
  })

  it.effect("a step's while may need services: the fallback's Layer requires them", () => {
    class FallbackRule extends Context.Service<FallbackRule, { readonly on: ReadonlyArray<string> }>()("test/FallbackRule") {}
    const primary = fake("primary", ["unavailable"])
    const secondary = fake("secondary", ["answer"])
    const Model: Layer.Layer<ChatModel.ChatModel, never, FallbackRule> = ChatModel.fallback(ExecutionPlan.make(
      { provide: primary.layer },
      { provide: secondary.layer, while: (error: ChatModel.ModelError) => Effect.map(FallbackRule, (rule) => rule.on.includes(error.reason)) }
    ))
    return Effect.gen(function*() {
      expect((yield* generate).model).toBe("secondary")
    }).pipe(Effect.provide(Model.pipe(Layer.provide(Layer.succeed(FallbackRule, { on: ["unavailable"] })))))
  })

  it.effect("streamed: a stream that fails before its first part is tried again and falls back; the caller sees the answering model's parts only", () => {
    const primary = fake("primary", ["unavailable"])
    const secondary = fake("secondary", ["answer"])
    return Effect.gen(function*() {
      const parts = yield* streamed
      expect(parts.map((part) => part._tag === "TextDelta" ? part.text : `Done: ${part.response.model}`)).toEqual(["secondary ", "answers", "Done: secondary"])
      expect(primary.log).toEqual(["unavailable", "unavailable"])
    }).pipe(Effect.provide(ChatModel.fallback(ExecutionPlan.make({ provide: primary.layer, attempts: 2 }, { provide: secondary.layer }))))
  })

  it.effect("streamed: once text reached the caller, a failure ends the stream with its error, neither retried nor moved to another model", () => {
    const primary = fake("primary", ["text-then-unavailable"])
    const secondary = fake("secondary", ["answer"])
    return Effect.gen(function*() {
      const seen: Array<string> = []
      const error = yield* Effect.flip(Effect.flatMap(ChatModel.ChatModel, (model) =>
        Stream.runForEach(model.stream(request), (part) => Effect.sync(() => seen.push(part._tag === "TextDelta" ? part.text : "Done")))))
      expect(error).toBe(unavailable)
      expect(seen).toEqual(["primary "])
      expect([primary.log, secondary.log]).toEqual([["text-then-unavailable"], []])
    }).pipe(Effect.provide(ChatModel.fallback(ExecutionPlan.make(
      { provide: primary.layer, attempts: 3, while: isTransient },
      { provide: secondary.layer }
    ))))
  })

  it.effect("streams when a step streams; a plan of models that do not stream does not either", () =>
    Effect.gen(function*() {
      const plain = Layer.succeed(ChatModel.ChatModel, ChatModel.fromGenerate(() => Effect.succeed(answer("plain"))))
      const service = yield* Effect.provide(ChatModel.ChatModel, ChatModel.fallback(ExecutionPlan.make({ provide: plain }, { provide: plain })))
      expect(ChatModel.streams(service)).toBe(false)
      const mixed = yield* Effect.provide(ChatModel.ChatModel, ChatModel.fallback(ExecutionPlan.make({ provide: plain }, { provide: fake("s", ["answer"]).layer })))
      expect(ChatModel.streams(mixed)).toBe(true)
    }))

  describe("the plan owns the retries (decision 164)", () => {
    const rateLimited = (retryAfterMillis?: number) =>
      new ChatModel.ModelError({ reason: "rate-limited", message: "HTTP 429", status: 429, ...(retryAfterMillis === undefined ? {} : { retryAfterMillis }) })

    /**
     * A model that fails with `errors` in turn, then answers; records the clock's time of each
     * call and whether the caller said it retries (`ChatModel.RetriedByCaller`).
     */
    const timed = (name: string, errors: ReadonlyArray<ChatModel.ModelError>) => {
      const at: Array<number> = []
      const byCaller: Array<boolean> = []
      const generate = () =>
        Effect.gen(function*() {
          at.push(yield* Clock.currentTimeMillis)
          byCaller.push(yield* ChatModel.RetriedByCaller)
          const error = errors[at.length - 1]
          return error === undefined ? answer(`${name} answers`) : yield* Effect.fail(error)
        })
      const service: ChatModel.ChatModel.Service = {
        model: name,
        generate,
        stream: () => Stream.map(Stream.fromEffect(generate()), (response): ChatModel.StreamPart => ({ _tag: "Done", response }))
      }
      return { at, byCaller, layer: Layer.succeed(ChatModel.ChatModel, service) }
    }

    /** The plan of docs/providers.md: the primary twice, 1 s apart, while the failure may pass; then the backup once. */
    const documented = (primary: Layer.Layer<ChatModel.ChatModel>, backup: Layer.Layer<ChatModel.ChatModel>, options?: ChatModel.FallbackOptions) =>
      ChatModel.fallback(
        ExecutionPlan.make(
          { provide: primary, attempts: 2, schedule: Schedule.spaced("1 second"), while: isTransient },
          { provide: backup, while: (error: ChatModel.ModelError) => error.reason !== "invalid-request" }
        ),
        options
      )

    /** Runs `call` to its end on the TestClock, a second at a time. */
    const settled = <A, E>(call: Effect.Effect<A, E>) =>
      Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(call)
        for (let second = 0; second < 120 && fiber.pollUnsafe() === undefined; second++) yield* TestClock.adjust("1 second")
        return yield* Fiber.join(fiber)
      })

    it.effect("each attempt is told the caller retries (RetriedByCaller); outside a plan it is not", () => {
      const primary = timed("primary", [unavailable, unavailable])
      const backup = timed("backup", [])
      return Effect.gen(function*() {
        yield* settled(generate.pipe(Effect.provide(documented(primary.layer, backup.layer))))
        expect([primary.byCaller, backup.byCaller]).toEqual([[true, true], [true]])
        const alone = timed("alone", [])
        yield* generate.pipe(Effect.provide(alone.layer))
        expect(alone.byCaller).toEqual([false])
      })
    })

    it.effect("a 503 without Retry-After: the step's schedule spaces its attempts (0 s, 1 s), then the backup at once", () => {
      const primary = timed("primary", [unavailable, unavailable])
      const backup = timed("backup", [])
      return Effect.gen(function*() {
        const response = yield* settled(generate.pipe(Effect.provide(documented(primary.layer, backup.layer))))
        expect(response.model).toBe("backup")
        expect([primary.at, backup.at]).toEqual([[0, 1000], [1000]])
      })
    })

    it.effect("a 429 asking for 2 s: the next attempt waits the 2 s (not the schedule's 1 s); the backup is not made to wait for it", () => {
      const primary = timed("primary", [rateLimited(2000), rateLimited(2000)])
      const backup = timed("backup", [])
      return Effect.gen(function*() {
        const fiber = yield* Effect.forkChild(generate.pipe(Effect.provide(documented(primary.layer, backup.layer))))
        yield* TestClock.adjust("1999 millis")
        expect(primary.at).toEqual([0])
        yield* TestClock.adjust("1 millis")
        expect((yield* Fiber.join(fiber)).model).toBe("backup")
        expect([primary.at, backup.at]).toEqual([[0, 2000], [2000]])
      })
    })

    it.effect("a schedule longer than the Retry-After keeps its own delay", () => {
      const primary = timed("primary", [rateLimited(300), rateLimited(300)])
      const backup = timed("backup", [])
      return Effect.gen(function*() {
        yield* settled(generate.pipe(Effect.provide(documented(primary.layer, backup.layer))))
        expect([primary.at, backup.at]).toEqual([[0, 1000], [1000]])
      })
    })

    it.effect("a step with attempts and no schedule still waits for its server's Retry-After", () => {
      const primary = timed("primary", [rateLimited(2000)])
      return Effect.gen(function*() {
        const response = yield* settled(generate.pipe(Effect.provide(ChatModel.fallback(ExecutionPlan.make({ provide: primary.layer, attempts: 2 })))))
        expect(response.text).toBe("primary answers")
        expect(primary.at).toEqual([0, 2000])
      })
    })

    it.effect("a Retry-After beyond maxRetryAfter (60 s by default, or as given) is not waited for: the plan moves on at once", () => {
      const quota = timed("primary", [rateLimited(3_600_000)])
      const backup = timed("backup", [])
      return Effect.gen(function*() {
        yield* generate.pipe(Effect.provide(documented(quota.layer, backup.layer)))
        expect([quota.at, backup.at]).toEqual([[0], [0]])
        const impatient = timed("primary", [rateLimited(2000)])
        const other = timed("backup", [])
        yield* generate.pipe(Effect.provide(documented(impatient.layer, other.layer, { maxRetryAfter: "1 second" })))
        expect([impatient.at, other.at]).toEqual([[0], [0]])
      })
    })

    it.effect("streamed: the same waits", () => {
      const primary = timed("primary", [rateLimited(2000), rateLimited(2000)])
      const backup = timed("backup", [])
      return Effect.gen(function*() {
        const parts = yield* settled(streamed.pipe(Effect.provide(documented(primary.layer, backup.layer))))
        expect(parts.map((part) => part._tag === "Done" ? part.response.model : part._tag)).toEqual(["backup"])
        expect([primary.at, backup.at, primary.byCaller]).toEqual([[0, 2000], [2000], [true, true]])
      })
    })
  })

  it.effect("in a run: ModelResponded and the model call's span name the model that answered; each attempt has its own span", () => {
    const primary = fake("primary", ["unavailable"])
    const secondary = fake("secondary", ["answer"])
    const spans: Array<Tracer.Span> = []
    const tracer = Tracer.make({
      span: ({ annotations, kind, links, name, parent, startTime }) => {
        const attributes = new Map<string, unknown>()
        const span: Tracer.Span = {
          _tag: "Span", name, spanId: `s${spans.length}`, traceId: "t", parent, annotations, status: { _tag: "Started", startTime },
          attributes, links, sampled: true, kind, end: () => undefined, attribute: (key, value) => void attributes.set(key, value),
          event: () => undefined, addLinks: () => undefined
        }
        spans.push(span)
        return span
      }
    })
    return Effect.gen(function*() {
      const events = yield* Agent.stream(Agent.make({}), { input: "Hi" }).pipe(Stream.runCollect, Effect.withTracer(tracer))
      const last = events.at(-1)
      assert(last?._tag === "RunCompleted")
      expect(last.exit.text).toBe("secondary answers")
      expect(events.filter((e) => e._tag === "TextDelta").map((e) => e.text)).toEqual(["secondary ", "answers"])
      const responded = events.find((e): e is AgentEvent.ModelResponded => e._tag === "ModelResponded")!
      expect([responded.model, responded.provider]).toEqual(["secondary", "secondary-provider"])
      const model = spans.find((s) => s.name === "agentfx.model")!
      expect([model.attributes.get("gen_ai.request.model"), model.attributes.get("gen_ai.provider.name")]).toEqual(["secondary", "secondary-provider"])
      const attempts = spans.filter((s) => s.name === "agentfx.model.attempt")
      expect(attempts.map((s) => s.attributes.get("gen_ai.request.model"))).toEqual(["primary", "secondary"])
      expect(attempts.every((s) => Option.getOrUndefined(s.parent)?.spanId === model.spanId)).toBe(true)
    }).pipe(Effect.provide(ChatModel.fallback(ExecutionPlan.make({ provide: primary.layer }, { provide: secondary.layer }))))
  })
})
