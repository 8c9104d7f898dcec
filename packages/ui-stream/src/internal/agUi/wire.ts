/**
 * A segment of an agentfx run — its turn, or a resume after a pause — as one AG-UI run: the
 * request's `RUN_STARTED`, the slots' `STATE_SNAPSHOT`, a step per model call (its text, then
 * the tool calls it asked for, each with its result as the model is shown it), and at its end
 * the slots' `STATE_DELTA` and `RUN_FINISHED` — `interrupt` when the run paused, one interrupt
 * per pending call, `success` when it completed — or `RUN_ERROR` when it failed. Events of a
 * sub-agent's run (another run id) are not the segment's: its call's result is. Events that a
 * driver lost are a `CUSTOM` event, `agentfx.eventsLost`, where they would have been.
 *
 * Ids are unique in the thread, as the client keys its messages by them: the assistant message
 * of an iteration is `<run id>-<iteration>` (its text, and the parent of its tool calls); a
 * tool result's message `<run id>-result-<call id>` (call ids are unique in a conversation).
 */
import type { Agent, AgentEvent, AgentExit, Json, Message, Part, ToolCall as ToolCalls } from "@agentfx/core"
import type { Driven } from "../../ChatDriver.js"
import { ToolCall, ToolError } from "@agentfx/core"
import { Duration, Stream } from "effect"
import type { AgUiEvent, ContentPart, Interrupt, TokenUsage } from "../../AgUiEvent.js"
import { toEvent } from "../../AgUiEvent.js"
import * as Approval from "../approval.js"
import type * as Runner from "../runner.js"
import * as State from "./state.js"

/** A call the resume decided without running it: what the model is shown of it. */
export interface Decided {
  readonly call: ToolCalls.ToolCall
  readonly outcome: ToolCalls.Outcome
}

/** Where a segment starts. */
export interface Start {
  readonly threadId: string
  /** The request's run id: the AG-UI run's. */
  readonly runId: string
  /** The slots as the segment starts (`undefined`: the agent has none). */
  readonly state: State.State | undefined
  /** A resume's: the iteration whose batch it finishes, and the calls it decided without running them. */
  readonly resumed?: { readonly iteration: number; readonly decided: ReadonlyArray<Decided> } | undefined
}

const step = (iteration: number) => `step-${iteration}`

/** A part of the content of a user message or a tool result: a file as an image, audio, video or document part. */
export const filePart = (file: Part.FilePart): ContentPart => ({
  type: file.mediaType.startsWith("image/") ? "image" : file.mediaType.startsWith("audio/") ? "audio" : file.mediaType.startsWith("video/") ? "video" : "document",
  source: file.source._tag === "Url"
    ? { type: "url", value: file.source.url, mimeType: file.mediaType }
    : { type: "data", value: file.source.data, mimeType: file.mediaType }
})

/** A tool result's content: what the model is shown (text as it is, other JSON as its text), then the files. */
export const contentOf = ({ content, files }: {
  readonly content: Message.ToolResultMessage["content"]
  readonly files?: ReadonlyArray<Part.FilePart> | undefined
}): string | ReadonlyArray<ContentPart> => {
  const text = typeof content === "string" ? content : JSON.stringify(content)
  if (files === undefined || files.length === 0) return text
  return [{ type: "text", text }, ...files.map(filePart)]
}

/** The JSON Schema of the answers an interrupt takes (`AgUiApi.Answer`), with the tool's parameters for edited arguments. */
const responseSchema = (agent: Agent.Any, kind: AgentExit.Paused["kind"], toolName: string): { readonly [key: string]: Json.JsonValue } => {
  const answer = (type: string, properties: { readonly [key: string]: Json.JsonValue }, required: ReadonlyArray<string> = []) => ({
    type: "object",
    properties: { type: { const: type }, ...properties },
    required: ["type", ...required],
    additionalProperties: false
  })
  if (kind === "environment") return { oneOf: [answer("approve", {}), answer("reject", {})] }
  const parameters = agent.toolDefinitions.find((tool) => tool.name === toolName)?.parameters as Json.JsonValue | undefined
  return {
    oneOf: [
      answer("approve", { args: parameters ?? {} }),
      answer("reject", { reason: { type: "string" } }),
      answer("reply", { value: {} }, ["value"])
    ]
  }
}

/** The interrupt of a pending call of a pause of run `runId` at `revision`. */
export const interruptOf = (
  agent: Agent.Any,
  pause: { readonly runId: string; readonly revision: number; readonly kind: AgentExit.Paused["kind"] },
  { call, error, why }: AgentExit.PendingCall
): Interrupt => ({
  id: Approval.format({ runId: pause.runId, revision: pause.revision, callId: call.id }),
  reason: pause.kind === "approval" ? "tool_approval" : "tool_failure",
  message: pause.kind === "approval" ? why ?? `${call.name} waits for approval` : `${call.name} failed: ${error?.message ?? "its environment failed"}`,
  toolCallId: call.id,
  responseSchema: responseSchema(agent, pause.kind, call.name)
})

/** The wire of a segment of run `runId`, starting at `start`. */
export const make = (agent: Agent.Any, start: Start) => (runId: string): Runner.Wire => {
  const messageOf = (iteration: number) => `${runId}-${iteration}`
  let iteration = start.resumed?.iteration ?? 0
  let stepOpen = start.resumed !== undefined
  let text: string | undefined
  /** The calls of this step that were announced (`TOOL_CALL_START`). */
  const announced = new Set<string>()
  const usage = new Map<string, { -readonly [K in keyof TokenUsage]: TokenUsage[K] }>()
  const encode = (events: ReadonlyArray<AgUiEvent>) => events.map(toEvent)

  const closeText = (): Array<AgUiEvent> => {
    if (text === undefined) return []
    const messageId = text
    text = undefined
    return [{ type: "TEXT_MESSAGE_END", messageId }]
  }
  const closeStep = (): Array<AgUiEvent> => {
    const events = closeText()
    if (stepOpen) events.push({ type: "STEP_FINISHED", stepName: step(iteration) })
    stepOpen = false
    return events
  }
  const announce = (call: ToolCalls.ToolCall): Array<AgUiEvent> => {
    announced.add(call.id)
    return [
      { type: "TOOL_CALL_START", toolCallId: call.id, toolCallName: call.name, parentMessageId: messageOf(iteration) },
      { type: "TOOL_CALL_ARGS", toolCallId: call.id, delta: JSON.stringify(call.args) },
      { type: "TOOL_CALL_END", toolCallId: call.id }
    ]
  }
  const result = (callId: string, outcome: ToolCalls.Outcome): AgUiEvent => ({
    type: "TOOL_CALL_RESULT",
    messageId: `${runId}-result-${callId}`,
    toolCallId: callId,
    role: "tool",
    content: contentOf(ToolCall.modelContent(outcome))
  })
  const delta = (state: State.State | undefined): Array<AgUiEvent> => {
    if (start.state === undefined || state === undefined) return []
    const operations = State.diff(start.state, state)
    return operations.length === 0 ? [] : [{ type: "STATE_DELTA", delta: operations }]
  }
  const finished = (outcome: Extract<AgUiEvent, { readonly type: "RUN_FINISHED" }>["outcome"]): AgUiEvent => ({
    type: "RUN_FINISHED",
    threadId: start.threadId,
    runId: start.runId,
    outcome,
    ...(usage.size === 0 ? {} : { usage: [...usage.values()] })
  })
  const count = (event: AgentEvent.ModelResponded) => {
    const key = `${event.provider ?? ""}\u0000${event.model ?? ""}`
    const entry = usage.get(key) ?? {
      ...(event.provider === undefined ? {} : { provider: event.provider }),
      ...(event.model === undefined ? {} : { model: event.model }),
      inputTokens: 0,
      outputTokens: 0,
      totalTokens: 0
    }
    entry.inputTokens += Math.round(event.usage.inputTokens)
    entry.outputTokens += Math.round(event.usage.outputTokens)
    entry.totalTokens += Math.round(event.usage.totalTokens)
    usage.set(key, entry)
  }

  const paused = (exit: AgentExit.Paused): Array<AgUiEvent> => {
    const events = closeText()
    const interrupts: Array<Interrupt> = []
    for (const pending of exit.pending) {
      if (!announced.has(pending.call.id)) events.push(...announce(pending.call))
      interrupts.push(interruptOf(agent, { runId, revision: exit.checkpoint.revision, kind: exit.kind }, pending))
    }
    const [first, ...rest] = interrupts
    return [...events, ...closeStep(), ...delta(exit.checkpoint.state), finished({ type: "interrupt", interrupts: [first!, ...rest] })]
  }

  const translate = (event: Driven): ReadonlyArray<AgUiEvent> => {
    if (event.runId !== runId) return []
    switch (event._tag) {
      case "ModelCalled": {
        // a context policy's summary call is no step of the answer
        if (event.purpose === "compaction") return []
        const events = closeStep()
        iteration = event.iteration
        stepOpen = true
        announced.clear()
        events.push({ type: "STEP_STARTED", stepName: step(iteration) })
        return events
      }
      case "TextDelta": {
        if (event.text.length === 0) return []
        if (text !== undefined) return [{ type: "TEXT_MESSAGE_CONTENT", messageId: text, delta: event.text }]
        text = messageOf(event.iteration)
        return [{ type: "TEXT_MESSAGE_START", messageId: text, role: "assistant" }, { type: "TEXT_MESSAGE_CONTENT", messageId: text, delta: event.text }]
      }
      case "ModelResponded": {
        count(event)
        if (event.purpose === "compaction") return []
        const events = closeText()
        if (event.reasoning !== undefined) {
          const messageId = `${messageOf(event.iteration)}-reasoning`
          events.push(
            { type: "REASONING_START", messageId },
            { type: "REASONING_MESSAGE_START", messageId, role: "reasoning" },
            { type: "REASONING_MESSAGE_CONTENT", messageId, delta: event.reasoning },
            { type: "REASONING_MESSAGE_END", messageId },
            { type: "REASONING_END", messageId }
          )
        }
        return events
      }
      case "ToolStarted":
        return announce({ id: event.callId, name: event.toolName, args: event.args })
      case "ToolSucceeded":
        return [result(event.callId, {
          _tag: "Succeeded",
          callId: event.callId,
          toolName: event.toolName,
          value: event.value,
          ...(event.files === undefined ? {} : { files: event.files })
        })]
      case "ToolFailed":
        return [result(event.callId, { _tag: "Failed", callId: event.callId, toolName: event.toolName, error: event.error })]
      case "ToolTimedOut": {
        const error = new ToolError.ToolTimeout({ toolName: event.toolName, timeout: Duration.millis(event.timeoutMillis) })
        return [result(event.callId, { _tag: "Failed", callId: event.callId, toolName: event.toolName, error })]
      }
      case "RunPaused":
        return paused(event.exit)
      case "RunCompleted":
        return [...closeStep(), ...delta(State.encode(agent, event.exit.state)), finished({ type: "success" })]
      case "EventsLost":
        // the text cut off is ended where it stopped; the lost events are told where they would have been
        return [...closeText(), { type: "CUSTOM", name: "agentfx.eventsLost", value: { runId: event.runId, message: event.message } }]
      case "RunEnded":
        // completed, its last events lost: the slots' changes with them (a thread read has the answer)
        return [...closeStep(), finished({ type: "success" })]
      case "RunStarted":
      case "RunResumed":
      case "ContextCompacted":
      case "BatchTruncated":
        return []
    }
  }

  const opening: Array<AgUiEvent> = [{ type: "RUN_STARTED", threadId: start.threadId, runId: start.runId }]
  if (start.state !== undefined) opening.push({ type: "STATE_SNAPSHOT", snapshot: start.state })
  if (start.resumed !== undefined) {
    opening.push({ type: "STEP_STARTED", stepName: step(iteration) })
    for (const { call, outcome } of start.resumed.decided) opening.push(...announce(call), result(call.id, outcome))
  }

  return {
    head: [],
    opening: encode(opening),
    event: (event) => {
      const events = encode(translate(event))
      if (event.runId !== runId || (event._tag !== "RunPaused" && event._tag !== "RunCompleted" && event._tag !== "RunEnded")) return { events }
      return { events, end: { status: event._tag === "RunPaused" ? "paused" : "ended", ending: [] } }
    },
    failed: ({ code, message }) => ({ events: encode([...closeStep(), { type: "RUN_ERROR", message, code }]), ending: [] })
  }
}

/**
 * The AG-UI run of a message the thread's running run took (`"steer"`) when this process does
 * not replay that run: started and finished, with nothing to show — the running run answers it.
 */
export const answered = (threadId: string, runId: string) =>
  Stream.make(toEvent({ type: "RUN_STARTED", threadId, runId }), toEvent({ type: "RUN_FINISHED", threadId, runId, outcome: { type: "success" } }))
