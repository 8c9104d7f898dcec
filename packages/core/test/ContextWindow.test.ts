import { assert, describe, expect, it } from "@effect/vitest"
import { Context, Effect, Result, Layer, Schema, Stream } from "effect"
import {
  Agent,
  type AgentEvent,
  ChatMemory,
  ChatModel,
  ContextWindow,
  Decision,
  Message,
  Middleware,
  Part,
  RunStore,
  ScriptedChatModel,
  Tool
} from "../src/index.js"

/** A page of about 100 tokens (as `ContextWindow.estimateTokens` counts). */
const pageText = (page: number) => `page ${page}: ${"lorem ipsum dolor sit amet ".repeat(14)}`

const readPage = Tool.make("read_page", {
  description: "Reads a page of the report",
  parameters: Schema.Struct({ page: Schema.Number }),
  success: Schema.String,
  handler: ({ page }) => Effect.succeed(pageText(page))
})

const publish = Tool.make("publish", {
  description: "Publishes the report",
  parameters: Schema.Struct({}),
  success: Schema.String,
  needsApproval: true,
  handler: () => Effect.succeed("published")
})

const system = "You read a report, two pages at a time, then answer."

/** The first page the model has not asked for yet: after the last pages it asked for in what it is sent. */
const nextPage = (messages: ReadonlyArray<ChatModel.ModelMessage>) => {
  const last = messages.filter((m): m is Message.AssistantMessage => m._tag === "Assistant" && m.toolCalls.length > 0).at(-1)
  return last === undefined ? 0 : Math.max(...last.toolCalls.map((call) => (call.args as { page: number }).page)) + 1
}

/** The agent's model: two pages per call until `pages` are read (then `last`, else an answer); a summary request gets a summary. */
const reader = (pages: number, last?: ScriptedChatModel.Step): ScriptedChatModel.StepFunction => (request) => {
  if (request.system === ContextWindow.defaultInstructions) return ScriptedChatModel.text("The first pages were read.")
  const lastMessage = request.messages.at(-1)
  if (lastMessage?._tag === "ToolResult" && lastMessage.toolName === "publish") return ScriptedChatModel.text("Published.")
  const page = nextPage(request.messages)
  if (page >= pages) return last ?? ScriptedChatModel.text(`Read ${pages} pages.`)
  return ScriptedChatModel.toolCalls(
    { id: `p${page}`, name: "read_page", args: { page } },
    { id: `p${page + 1}`, name: "read_page", args: { page: page + 1 } }
  )
}

const isSummaryRequest = (request: ChatModel.ChatRequest) => request.system === ContextWindow.defaultInstructions

/** The estimate of a request, as the loop makes it (unscaled). */
const estimate = (request: ChatModel.ChatRequest) => ContextWindow.estimateTokens(request)

/** What is wrong with the tool calls of what a model is sent: a result without its call, a call without its result, a result first. */
const pairing = (messages: ReadonlyArray<ChatModel.ModelMessage>): string => {
  const calls = new Set<string>()
  const answered = new Set<string>()
  if (messages[0]?._tag === "ToolResult" || messages[1]?._tag === "ToolResult") return "a tool result comes first"
  for (const message of messages) {
    if (message._tag === "Assistant") for (const call of message.toolCalls) calls.add(call.id)
    if (message._tag === "ToolResult") {
      if (!calls.has(message.callId)) return `result ${message.callId} without its call`
      answered.add(message.callId)
    }
  }
  const unanswered = [...calls].filter((id) => !answered.has(id))
  return unanswered.length === 0 ? "paired" : `calls ${unanswered.join(", ")} without results`
}

const compactions = (messages: ReadonlyArray<Message.Message>) => messages.filter((m): m is Message.CompactionMessage => m._tag === "Compaction")

class SummaryModel extends Context.Service<SummaryModel, ChatModel.ChatModel.Service>()("test/SummaryModel") {}

/** A summary model that records what it is asked and answers with `answer` (an effect: a failure, say). */
const summaryModel = (answer: (request: ChatModel.ChatRequest) => Effect.Effect<ChatModel.ChatResponse, ChatModel.ModelError>) => {
  const requests: Array<ChatModel.ChatRequest> = []
  const layer = Layer.succeed(SummaryModel, ChatModel.fromGenerate((request) => Effect.suspend(() => (requests.push(request), answer(request)))))
  return { requests, layer }
}

const summaryText = (text: string, usage: ChatModel.Usage = ChatModel.emptyUsage) =>
  Effect.succeed<ChatModel.ChatResponse>({ text, toolCalls: [], finishReason: "stop", usage })

describe("ContextWindow.view and estimateTokens", () => {
  it("a compaction entry puts its summary (or a note) first, keeps the messages from its replaces on (and the last user message), and is never sent", () => {
    const history: Array<Message.Message> = [
      Message.user("Read the report"),
      Message.assistant("", [{ id: "p0", name: "read_page", args: { page: 0 } }]),
      { _tag: "ToolResult", callId: "p0", toolName: "read_page", isError: false, content: "page 0" },
      Message.user("And the next one?"),
      { _tag: "Compaction", replaces: 3, summary: "Page 0 was read." },
      Message.assistant("Next.")
    ]
    expect(ContextWindow.view(history)).toEqual([
      Message.user("Summary of the earlier part of this conversation, which it replaces:\n\nPage 0 was read."),
      Message.user("And the next one?"),
      Message.assistant("Next.")
    ])
    expect(ContextWindow.view([...history.slice(0, 4), { _tag: "Compaction", replaces: 1 }])).toEqual([
      Message.user("(The earlier part of this conversation was left out to fit the context window.)"),
      history[1],
      history[2],
      history[3]
    ])
    // a cut written outside a turn between a call and its result: the orphan result is not sent
    expect(ContextWindow.view([...history.slice(0, 4), { _tag: "Compaction", replaces: 2 }]).map((m) => m._tag)).toEqual(["User", "User"])
    // a later entry supersedes an earlier one; an entry never replaces past itself; the last user message is always sent
    expect(ContextWindow.view([...history, { _tag: "Compaction", replaces: 99 }])).toEqual([
      Message.user("(The earlier part of this conversation was left out to fit the context window.)"),
      Message.user("And the next one?")
    ])
    expect(ContextWindow.view(history.slice(0, 4))).toEqual(history.slice(0, 4))
  })

  it("estimates each message as its JSON's UTF-8 bytes / 4, the system prompt as its bytes / 4, rounded up", () => {
    const message = Message.user("Hello, Åsa") // {"_tag":"User","text":"Hello, Åsa"}: 35 bytes (Å is 2)
    expect(ContextWindow.estimateTokens({ messages: [message] })).toBe(9)
    expect(ContextWindow.estimateTokens({ system: "12345", messages: [message, message] })).toBe(2 + 18)
  })

  it("counts a file apart from its base64: an image (inline or by URL) as 1,600, another inline file as its bytes / 4", () => {
    const photo = Part.image({ data: Buffer.alloc(1_000_000, 7) })
    const pdf = Part.file({ mediaType: "application/pdf", data: Buffer.alloc(4_000) })
    const shown = Message.user([Part.text("Look"), photo, Part.image({ url: "https://example.com/a.png" }), pdf])
    const stripped = { ...shown, parts: [Part.text("Look"), null, null, null] }
    expect(ContextWindow.estimateTokens({ messages: [shown] })).toBe(Math.ceil(JSON.stringify(stripped).length / 4) + 1_600 + 1_600 + 1_000)
    const result: Message.ToolResultMessage = { _tag: "ToolResult", callId: "c1", toolName: "shot", isError: false, content: "ok", files: [photo] }
    const { files: _, ...bare } = result
    expect(ContextWindow.estimateTokens({ messages: [result] })).toBe(Math.ceil(JSON.stringify({ ...bare, files: [null] }).length / 4) + 1_600)
  })
})

describe("ContextWindow.trim", () => {
  it.effect("keeps every model call under maxTokens, never splits a tool call from its results, and keeps the whole history with compaction entries", () =>
    Effect.gen(function*() {
      const maxTokens = 900
      const agent = Agent.make({ tools: [readPage], system, context: ContextWindow.trim({ maxTokens }) })
      const exit = yield* Agent.run(agent, { input: "Read the report", conversationId: "c-trim" })
      assert(exit._tag === "Completed")
      expect(exit.text).toBe("Read 16 pages.")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(9)
      expect(requests.map(estimate).every((tokens) => tokens <= maxTokens)).toBe(true)
      // without the policy, the last call would be sent about 2,100 tokens
      expect(estimate({ ...requests.at(-1)!, messages: exit.messages.filter((m): m is ChatModel.ModelMessage => m._tag !== "Compaction") }))
        .toBeGreaterThan(2 * maxTokens)
      expect(requests.map((r) => pairing(r.messages))).toEqual(requests.map(() => "paired"))
      const trimmed = requests.filter((r) => r.messages[0]!._tag === "User" && (r.messages[0] as Message.UserMessage).text.startsWith("(The earlier"))
      expect(trimmed.length).toBeGreaterThan(0)
      // every message is kept, in the run's history and in memory, the compaction entries among them
      const memory = yield* Effect.flatMap(ChatMemory.ChatMemory, (m) => m.get("c-trim"))
      expect(memory).toEqual(exit.messages)
      expect(memory.filter((m) => m._tag === "ToolResult")).toHaveLength(16)
      expect(compactions(memory).every((entry) => entry.summary === undefined)).toBe(true)
      // each cut is recorded before a message that is not a tool result
      expect(compactions(memory).map((entry) => memory[entry.replaces]!._tag)).toEqual(compactions(memory).map(() => "Assistant"))
      // what each call was sent is the view of the history as it stood: up to the answer to it
      const answers = memory.flatMap((m, i) => m._tag === "Assistant" ? [i] : [])
      expect(requests.map((r) => r.messages)).toEqual(answers.map((at) => ContextWindow.view(memory.slice(0, at))))
    }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer(reader(16)), ChatMemory.layerMemory))))

  it.effect("a last tool call whose results alone pass maxTokens fails the run with ContextOverflow, and the conversation is left as it was", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [readPage], system, context: ContextWindow.trim({ maxTokens: 200 }) })
      const error = yield* Effect.flip(Agent.run(agent, { input: "Read the report", conversationId: "c-over" }))
      assert(error._tag === "ContextOverflow")
      expect(error.maxTokens).toBe(200)
      expect(error.tokens).toBeGreaterThan(200)
      expect(error.message).toBe(
        `The model call cannot be brought under the context limit: the last 3 messages with the system prompt and tool definitions, and the last user message (about ${error.tokens} tokens, limit 200)`
      )
      const memory = yield* Effect.flatMap(ChatMemory.ChatMemory, (m) => m.get("c-over"))
      expect(memory.map((m) => m._tag)).toEqual(["User", "Assistant", "ToolResult", "ToolResult"])
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(1)
    }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer(reader(4)), ChatMemory.layerMemory))))

  it.effect("the model's reported input tokens scale the estimate: a model that counts 4× more is trimmed 4× sooner", () =>
    Effect.gen(function*() {
      const maxTokens = 2_000
      const agent = Agent.make({ tools: [readPage], system, context: ContextWindow.trim({ maxTokens }) })
      yield* Agent.run(agent, { input: "Read the report" })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      // every call after the first (which reported) is sent at most a quarter of the limit, as estimated
      expect(requests.slice(1).map(estimate).every((tokens) => tokens <= maxTokens / 4)).toBe(true)
      expect(Math.max(...requests.map(estimate))).toBeLessThan(maxTokens / 2)
    }).pipe(Effect.provide(ScriptedChatModel.layer((request, index) => {
      const step = reader(16)(request, index) as ScriptedChatModel.Step
      const input = 4 * estimate(request)
      return { ...step, usage: { inputTokens: input, outputTokens: 10, totalTokens: input + 10 } }
    }))))

  it.effect("a model that reports fewer input tokens than agentfx estimates (an under-reporting server) never widens the view: every call stays within maxTokens by agentfx's own estimate", () =>
    Effect.gen(function*() {
      const maxTokens = 500
      const agent = Agent.make({ tools: [readPage], system, context: ContextWindow.trim({ maxTokens }) })
      yield* Agent.run(agent, { input: "Read the report" })
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.length).toBeGreaterThan(4)
      expect(Math.max(...requests.map(estimate))).toBeLessThanOrEqual(maxTokens)
    }).pipe(Effect.provide(ScriptedChatModel.layer((request, index) => {
      const step = reader(16)(request, index) as ScriptedChatModel.Step
      const input = Math.ceil(estimate(request) / 4)
      return { ...step, usage: { inputTokens: input, outputTokens: 10, totalTokens: input + 10 } }
    }))))
})

describe("ContextWindow.summarize", () => {
  it.effect("replaces the older messages by a summary call's answer, keeping the last keepLast with the whole group of the first; the call is observed like any model call", () =>
    Effect.gen(function*() {
      const summaries = summaryModel((request) => summaryText(`summary ${request.messages.length}`, { inputTokens: 300, outputTokens: 20, totalTokens: 320 }))
      const purposes: Array<string> = []
      const agent = Agent.make({
        tools: [readPage],
        system,
        context: ContextWindow.summarize({ maxTokens: 1_000, keepLast: 2, model: SummaryModel }),
        middleware: [Middleware.make({ model: (input, next) => Effect.sync(() => purposes.push(input.purpose)).pipe(Effect.andThen(next(input))) })]
      })
      const events = yield* Agent.stream(agent, { input: "Read the report", conversationId: "c-sum" }).pipe(
        Stream.runCollect,
        Effect.provide(summaries.layer)
      )
      const completed = [...events].at(-1)
      assert(completed?._tag === "RunCompleted")
      const exit = completed.exit
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.every((r) => !isSummaryRequest(r))).toBe(true)
      expect(requests.map(estimate).every((tokens) => tokens <= 1_000)).toBe(true)
      expect(requests.map((r) => pairing(r.messages))).toEqual(requests.map(() => "paired"))
      // each summary call is sent the previous summary and the messages it replaces, as one transcript
      expect(summaries.requests.length).toBeGreaterThan(1)
      const first = summaries.requests[0]!
      expect(first).toMatchObject({ system: ContextWindow.defaultInstructions, tools: [], toolChoice: "none" })
      expect((first.messages[0] as Message.UserMessage).text).toContain(`[user] Read the report\n[assistant calls read_page (p0)] {"page":0}`)
      expect((first.messages[0] as Message.UserMessage).text).toContain(`[result of read_page (p0)] ${pageText(0)}`)
      expect((summaries.requests[1]!.messages[0] as Message.UserMessage).text).toMatch(/^<previous-summary>\nsummary 1\n<\/previous-summary>\n<conversation>\n\[assistant calls read_page/)
      // the view after a summary: the summary, the user's question (always sent), then the last 2 messages with their
      // whole group (the call that the 2 results answer)
      const entries = compactions(exit.messages)
      expect(entries.map((e) => e.summary)).toEqual(summaries.requests.map(() => "summary 1"))
      expect(entries.map((e) => exit.messages[e.replaces]!._tag)).toEqual(entries.map(() => "Assistant"))
      const afterFirst = requests.find((r) => (r.messages[0] as Message.UserMessage).text.includes("summary 1"))!
      expect(afterFirst.messages[1]).toEqual(Message.user("Read the report"))
      expect(afterFirst.messages.slice(2).map((m) => m._tag)).toEqual(["Assistant", "ToolResult", "ToolResult"])
      // observed like any model call: middleware, events, usage and the model-call count
      expect(purposes.filter((p) => p === "compaction")).toHaveLength(summaries.requests.length)
      const called = [...events].filter((e): e is AgentEvent.ModelCalled => e._tag === "ModelCalled").map((e) => e.purpose)
      expect(called.filter((p) => p === "compaction")).toHaveLength(summaries.requests.length)
      const compacted = [...events].filter((e): e is AgentEvent.ContextCompacted => e._tag === "ContextCompacted")
      expect(compacted.map((e) => [e.summarized, e.replaces, e.tokensBefore > 1_000, e.tokensAfter <= 1_000])).toEqual(
        entries.map((e) => [true, e.replaces, true, true])
      )
      expect([...events].filter((e) => e._tag === "TextDelta" && e.text.startsWith("summary"))).toEqual([])
      expect(exit.usage.totalTokens).toBe(320 * summaries.requests.length)
    }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer(reader(16)), ChatMemory.layerMemory))))

  it.effect("the summary call's transcript names the files it replaces (they are not sent to it)", () =>
    Effect.gen(function*() {
      const scan = Part.image({ name: "scan.png", data: Buffer.from("89504e470d0a1a0a", "hex") })
      // the image counts 1,600 tokens, and the person's last message is always sent: room for it and a few pages
      const agent = Agent.make({ tools: [readPage], system, maxIterations: 20, context: ContextWindow.summarize({ maxTokens: 3_000, keepLast: 2 }) })
      const exit = yield* Agent.run(agent, { input: [Part.text("Read the report"), scan] })
      assert(exit._tag === "Completed")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      const transcript = (requests.find(isSummaryRequest)!.messages[0] as Message.UserMessage).text
      expect(transcript).toContain(`[user] Read the report [with file "scan.png" (image/png, 8 bytes)]\n[assistant calls read_page (p0)]`)
      expect(requests.find(isSummaryRequest)!.messages[0]).not.toHaveProperty("parts")
    }).pipe(Effect.provide(ScriptedChatModel.layer(reader(30)))))

  it.effect("the transcript names the files of a model's answer too (decision 164)", () => {
    const sketch = Part.image({ name: "sketch.png", data: Buffer.from("89504e470d0a1a0a", "hex") })
    const drawing: ScriptedChatModel.StepFunction = (request, index) => {
      const step = reader(30)(request, index) as ScriptedChatModel.Step
      return index === 0 ? { ...step, text: "A sketch first.", files: [sketch] } : step
    }
    return Effect.gen(function*() {
      const agent = Agent.make({ tools: [readPage], system, maxIterations: 20, context: ContextWindow.summarize({ maxTokens: 3_000, keepLast: 2 }) })
      const exit = yield* Agent.run(agent, { input: "Read the report" })
      assert(exit._tag === "Completed")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      const transcript = (requests.find(isSummaryRequest)!.messages[0] as Message.UserMessage).text
      expect(transcript).toContain(`[assistant] A sketch first. [with file "sketch.png" (image/png, 8 bytes)]\n[assistant calls read_page (p0)]`)
    }).pipe(Effect.provide(ScriptedChatModel.layer(drawing)))
  })

  it.effect("without a model of its own, the run's model writes the summary", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [readPage], system, context: ContextWindow.summarize({ maxTokens: 1_000, keepLast: 2 }) })
      const exit = yield* Agent.run(agent, { input: "Read the report" })
      assert(exit._tag === "Completed")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests.filter(isSummaryRequest).length).toBe(compactions(exit.messages).length)
      expect(compactions(exit.messages).length).toBeGreaterThan(0)
    }).pipe(Effect.provide(ScriptedChatModel.layer(reader(12)))))

  it.effect("a failing summary call fails the run with CompactionFailed carrying the ModelError; nothing is compacted", () =>
    Effect.gen(function*() {
      const rateLimited = new ChatModel.ModelError({ reason: "rate-limited", message: "HTTP 429" })
      const summaries = summaryModel(() => Effect.fail(rateLimited))
      const agent = Agent.make({ tools: [readPage], system, context: ContextWindow.summarize({ maxTokens: 1_000, model: SummaryModel }) })
      const error = yield* Effect.flip(Agent.run(agent, { input: "Read the report", conversationId: "c-fail" }).pipe(Effect.provide(summaries.layer)))
      assert(error._tag === "CompactionFailed")
      expect(error.reason).toBe("model")
      expect(error.error).toBe(rateLimited)
      expect(error.message).toBe("The summary call of the context policy failed: HTTP 429")
      expect(summaries.requests).toHaveLength(1)
      const memory = yield* Effect.flatMap(ChatMemory.ChatMemory, (m) => m.get("c-fail"))
      expect(compactions(memory)).toEqual([])
      // the agent's model was not called after the failed summary
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(memory.filter((m) => m._tag === "Assistant")).toHaveLength(requests.length)
    }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer(reader(16)), ChatMemory.layerMemory))))

  it.effect("a summary too long to fit with the kept messages fails the run with ContextOverflow; nothing is compacted", () =>
    Effect.gen(function*() {
      const summaries = summaryModel(() => summaryText("very long summary ".repeat(300)))
      const agent = Agent.make({ tools: [readPage], system, context: ContextWindow.summarize({ maxTokens: 1_000, keepLast: 2, model: SummaryModel }) })
      const error = yield* Effect.flip(Agent.run(agent, { input: "Read the report", conversationId: "c-long" }).pipe(Effect.provide(summaries.layer)))
      assert(error._tag === "ContextOverflow")
      expect(error.detail).toBe("the summary and the last 3 messages with the system prompt and tool definitions, and the last user message")
      expect(error.tokens).toBeGreaterThan(1_000)
      expect(summaries.requests).toHaveLength(1)
      expect(compactions(yield* Effect.flatMap(ChatMemory.ChatMemory, (m) => m.get("c-long")))).toEqual([])
    }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer(reader(16)), ChatMemory.layerMemory))))

  it.effect("a summary call that answers no text fails the run with CompactionFailed (empty)", () =>
    Effect.gen(function*() {
      const summaries = summaryModel(() => summaryText("  \n"))
      const agent = Agent.make({ tools: [readPage], system, context: ContextWindow.summarize({ maxTokens: 1_000, model: SummaryModel }) })
      const error = yield* Effect.flip(Agent.run(agent, { input: "Read the report" }).pipe(Effect.provide(summaries.layer)))
      expect(error._tag === "CompactionFailed" && [error.reason, error.message]).toEqual([
        "empty",
        "The summary call of the context policy answered without a summary"
      ])
    }).pipe(Effect.provide(ScriptedChatModel.layer(reader(16)))))

  it.effect("a paused run resumes with the view it paused on, in another process (its copy in a fresh store and memory): no second summary", () =>
    Effect.gen(function*() {
      const summaries = summaryModel(() => summaryText("Pages 0 to 5 were read."))
      const agent = Agent.make({
        tools: [readPage, publish],
        system,
        context: ContextWindow.summarize({ maxTokens: 1_000, keepLast: 2, model: SummaryModel })
      })
      const script = ScriptedChatModel.layer(reader(8, ScriptedChatModel.toolCalls({ id: "pub", name: "publish", args: {} })))
      const first = yield* Effect.gen(function*() {
        const exit = yield* Agent.run(agent, { input: "Read the report, then publish it", conversationId: "c-pause" })
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        const memory = yield* Effect.flatMap(ChatMemory.ChatMemory, (m) => m.get("c-pause"))
        return { exit, before: requests.at(-1)!, memory }
      }).pipe(Effect.provide(Layer.mergeAll(script, ChatMemory.layerMemory, RunStore.layerMemory(), summaries.layer)))
      assert(first.exit._tag === "Paused")
      expect(summaries.requests).toHaveLength(1)
      expect((first.before.messages[0] as Message.UserMessage).text).toContain("Pages 0 to 5 were read.")
      // what the model was sent is read back from the conversation in memory
      expect(ContextWindow.view(first.memory)).toEqual([...first.before.messages, first.memory.at(-1)])
      const copy = JSON.parse(JSON.stringify(first.exit.checkpoint))
      const second = yield* Effect.gen(function*() {
        const exit = yield* Agent.resume(agent, copy, Decision.approveAll())
        const { requests } = yield* ScriptedChatModel.ScriptedChatModel
        return { exit, after: requests[0]! }
      }).pipe(Effect.provide(Layer.mergeAll(
        ScriptedChatModel.layer([ScriptedChatModel.text("Published.")]),
        ChatMemory.layerMemory,
        RunStore.layerMemory(),
        summaries.layer
      )))
      assert(second.exit._tag === "Completed")
      expect(second.exit.text).toBe("Published.")
      expect(second.after.messages).toEqual([
        ...first.before.messages,
        Message.assistant("", [{ id: "pub", name: "publish", args: {} }]),
        { _tag: "ToolResult", callId: "pub", toolName: "publish", isError: false, content: "published" }
      ])
      expect(summaries.requests).toHaveLength(1)
    }))
})

describe("ContextWindow policies and runs", () => {
  it("Agent.make refuses a policy that cannot hold, naming every problem", () => {
    const problems = (context: unknown, more: Partial<Agent.Options<[], {}, never, never>> = {}) => {
      const checked = Agent.validate({ ...more, context: context as ContextWindow.Policy })
      return Result.isFailure(checked) ? checked.failure.problems : []
    }
    expect(problems(ContextWindow.summarize({ maxTokens: 50, keepLast: -1, instructions: " " }), { system: "x".repeat(400) })).toEqual([
      "context.maxTokens 50 leaves no room for messages: the system prompt and tool definitions alone are about 100 tokens",
      "context.keepLast -1 is not a non-negative integer",
      "context.instructions must be a non-empty string"
    ])
    expect(problems(ContextWindow.trim({ maxTokens: 1.5 }))).toEqual(["context.maxTokens 1.5 is not a positive integer"])
    expect(problems({ _tag: "Window", size: 3 })).toEqual([
      "context must be ContextWindow.full, ContextWindow.trim({ maxTokens }) or ContextWindow.summarize({ maxTokens, … })"
    ])
    expect(problems({ ...ContextWindow.summarize({ maxTokens: 1_000 }), model: "gpt-4.1-mini" })).toEqual([
      "context.model must be the Context.Service key of a ChatModel service"
    ])
    expect(problems(ContextWindow.summarize({ maxTokens: 1_000, model: SummaryModel }))).toEqual([])
  })

  it.effect("a run's own policy is checked like the agent's, names no summary model, and is kept in its checkpoint across a resume", () =>
    Effect.gen(function*() {
      const agent = Agent.make({ tools: [readPage, publish], system })
      const refused = yield* Effect.flip(Agent.run(agent, {
        input: "Read the report",
        context: ContextWindow.summarize({ maxTokens: 1_000, model: SummaryModel }) as ContextWindow.Policy
      }))
      expect(refused._tag === "InvalidRunInput" && refused.problems).toEqual([
        "context.model cannot be set for one run (a run's policy is kept in its checkpoint, a model service is not): name the summary model on the agent"
      ])
      const exit = yield* Agent.run(agent, { input: "Read the report, then publish it", context: ContextWindow.trim({ maxTokens: 800 }) })
      assert(exit._tag === "Paused")
      expect(exit.checkpoint.context).toEqual({ _tag: "Trim", maxTokens: 800 })
      // an unsigned copy's policy is checked as the run's was
      const forged = yield* Effect.flip(Agent.resume(agent, { ...exit.checkpoint, context: { _tag: "Trim", maxTokens: -3 } }, Decision.approveAll()))
      expect(forged._tag === "InvalidCheckpoint" && [forged.reason, forged.detail]).toEqual(["malformed", "context.maxTokens -3 is not a positive integer"])
      const done = yield* Agent.resume(agent, exit.runId, Decision.approveAll())
      assert(done._tag === "Completed")
      expect(done.text).toBe("Published.")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      // the agent sends everything; the run trimmed, before its pause and after its resume
      expect(requests.map(estimate).every((tokens) => tokens <= 800)).toBe(true)
      expect((requests.at(-1)!.messages[0] as Message.UserMessage).text).toBe(
        "(The earlier part of this conversation was left out to fit the context window.)"
      )
    }).pipe(Effect.provide(ScriptedChatModel.layer(reader(8, ScriptedChatModel.toolCalls({ id: "pub", name: "publish", args: {} }))))))

  it.effect("a summary call counts against the run's budget: the run's own call after it is stopped, and continued with the summary's view", () => {
    const summaries = summaryModel(() => summaryText("Pages 0 to 5 were read.", { inputTokens: 400, outputTokens: 10, totalTokens: 410 }))
    return Effect.gen(function*() {
      const agent = Agent.make({
        tools: [readPage],
        system,
        budget: { modelCalls: 5 },
        context: ContextWindow.summarize({ maxTokens: 1_000, keepLast: 2, model: SummaryModel })
      })
      const stopped = yield* Effect.flip(Agent.run(agent, { input: "Read the report" }))
      assert(stopped._tag === "BudgetExceeded")
      expect([stopped.limit, stopped.allowed, stopped.used]).toEqual(["modelCalls", 5, 5])
      expect(stopped.checkpoint.usage.totalTokens).toBe(410)
      expect(compactions(stopped.checkpoint.messages as ReadonlyArray<Message.Message>)).toHaveLength(1)
      const done = yield* Agent.resume(agent, stopped.checkpoint, Decision.continue({ raise: { modelCalls: 6 } }))
      assert(done._tag === "Completed")
      const { requests } = yield* ScriptedChatModel.ScriptedChatModel
      expect(requests).toHaveLength(5)
      expect((requests[4]!.messages[0] as Message.UserMessage).text).toContain("Pages 0 to 5 were read.")
      expect(summaries.requests).toHaveLength(1)
    }).pipe(Effect.provide(Layer.merge(ScriptedChatModel.layer(reader(8)), summaries.layer)))
  })
})
