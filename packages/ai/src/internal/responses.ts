/**
 * The OpenAI Responses wire format (`POST {apiUrl}/responses`): neutral request → request
 * body; response object and stream events → neutral response. Read tolerantly: an event is
 * known by its `type` alone (no `sequence_number` needed), unknown events and fields are
 * skipped, and errors are found in every shape servers send them. No I/O here.
 */
import type { ChatModel, Message } from "@agentfx/core"
import { Either } from "effect"
import { parseArguments } from "./chatCompletions.js"
import { errorFromPayload } from "./httpError.js"
import { defined } from "./settings.js"
import type * as Sse from "./sse.js"
import { strictAllowed } from "./strictSchema.js"
import { wireParameters } from "./toolSchema.js"
import { count, invalid, isObject, type JsonObject, parseEvent, snippet, text } from "./wireJson.js"
import type { StreamReader, WireFormat } from "./wireModel.js"

type Json = JsonObject

const objects = (value: unknown): ReadonlyArray<Json> => (Array.isArray(value) ? value.filter(isObject) : [])

/** OpenAI's reasoning models take the system prompt as a `developer` message. */
const systemRole = (model: string) =>
  /^(o\d|gpt-5|codex-|computer-use)/.test(model) ? "developer" : "system"

const inputItems = (role: string, message: Message.Message): ReadonlyArray<object> => {
  switch (message._tag) {
    case "System":
      return [{ role, content: message.text }]
    case "User":
      return [{ role: "user", content: [{ type: "input_text", text: message.text }] }]
    case "Assistant":
      return [
        ...(message.text.length > 0 ? [{ role: "assistant", content: [{ type: "output_text", text: message.text }] }] : []),
        ...message.toolCalls.map((call) => ({
          type: "function_call",
          call_id: call.id,
          name: call.name,
          arguments: JSON.stringify(call.args)
        }))
      ]
    case "ToolResult":
      return [{ type: "function_call_output", call_id: message.callId, output: JSON.stringify(message.content) }]
  }
}

const toolChoice = (choice: ChatModel.ToolChoice) => typeof choice === "string" ? choice : { type: "function", name: choice.tool }

/** The answer's JSON Schema as `text.format`, strict when strict mode takes the schema. */
const textFormat = (output: ChatModel.OutputFormat) => ({
  format: { type: "json_schema", name: output.name, schema: wireParameters(output.schema), strict: strictAllowed(output.schema) }
})

const requestBody = (model: string, strict: boolean) => (request: ChatModel.ChatRequest, stream: boolean) => {
  const role = systemRole(model)
  const settings = request.settings
  return {
    model,
    input: [
      ...(request.system === undefined ? [] : [{ role, content: request.system }]),
      ...request.messages.flatMap((message) => inputItems(role, message))
    ],
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => ({
        type: "function",
        name: tool.name,
        description: tool.description,
        parameters: wireParameters(tool.parameters),
        strict
      })),
      tool_choice: toolChoice(request.toolChoice),
      ...defined({ parallel_tool_calls: settings?.parallelToolCalls })
    }),
    // `stop` has no place in the Responses API (`ignores`)
    ...defined({ temperature: settings?.temperature, top_p: settings?.topP, max_output_tokens: settings?.maxOutputTokens }),
    ...(request.output === undefined ? {} : { text: textFormat(request.output) }),
    ...(stream ? { stream: true } : {})
  }
}

/** The usage rule of every adapter: counts the server did not send (or sent as no count: infinite, negative) are 0, the total is input + output. */
const usage = (response: Json): ChatModel.Usage => {
  const wire = isObject(response.usage) ? response.usage : {}
  const inputTokens = count(wire.input_tokens)
  const outputTokens = count(wire.output_tokens)
  return { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens }
}

/** The one reason the Responses API gives for stopping: `incomplete_details.reason` of an incomplete response (a completed one gives none). */
const incompleteReason = (response: Json): [string] | undefined => {
  const reason = response.status === "incomplete" && isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined
  return typeof reason === "string" ? [reason] : undefined
}

const finishReason = (response: Json, refused: boolean, calls: number): ChatModel.FinishReason => {
  if (refused) return "refusal"
  if (calls > 0) return "tool-calls"
  if (response.status !== "incomplete") return "stop"
  const [reason] = incompleteReason(response) ?? []
  return reason === "max_output_tokens" ? "length" : reason === "content_filter" ? "content-filter" : "other"
}

interface Call {
  id: string
  name: string
  args: string
}

const callOf = (item: Json): Call => ({ id: text(item.call_id) || text(item.id), name: text(item.name), args: text(item.arguments) })

/** Text, refusal and calls of a response's `output` items (reasoning and built-in tool items are skipped). */
const outputOf = (response: Json) => {
  let answer = ""
  let refused = false
  const calls: Array<Call> = []
  for (const item of objects(response.output)) {
    if (item.type === "function_call") calls.push(callOf(item))
    if (item.type !== "message") continue
    for (const part of objects(item.content)) {
      if (part.type === "output_text") answer += text(part.text)
      if (part.type === "refusal") {
        refused = true
        answer += text(part.refusal)
      }
    }
  }
  return { text: answer, refused, calls }
}

/** A response that is not complete: its error (`failed`), or what it is (`in_progress`, `queued`, `cancelled`). */
const unfinished = (response: Json, provider: string, where: "mid-stream" | "with HTTP 200"): ChatModel.ModelError | undefined => {
  if (response.status === "failed") {
    return errorFromPayload({ provider, payload: isObject(response.error) ? response.error : { message: "the response failed" }, where })
  }
  if (response.status === "completed" || response.status === "incomplete" || response.status === undefined) return undefined
  return invalid(`${provider} answered a response that is ${String(response.status)}, not completed`)
}

const toResponse = (response: Json, streamed: { readonly text: string; readonly refused: boolean; readonly calls: ReadonlyArray<Call> }): ChatModel.ChatResponse => ({
  text: streamed.text,
  toolCalls: streamed.calls.map((call) => ({ id: call.id, name: call.name, args: parseArguments(call.args) })),
  finishReason: finishReason(response, streamed.refused, streamed.calls.length),
  providerFinishReasons: incompleteReason(response),
  usage: usage(response)
})

const decode = (body: unknown, provider: string): Either.Either<ChatModel.ChatResponse, ChatModel.ModelError> => {
  if (!isObject(body) || !Array.isArray(body.output)) {
    return Either.left(invalid(`${provider} sent a body that is not a Responses API response: ${snippet(body, 200)}`))
  }
  const failure = unfinished(body, provider, "with HTTP 200")
  return failure === undefined ? Either.right(toResponse(body, outputOf(body))) : Either.left(failure)
}

/**
 * Reads a streamed response. Text comes from `response.output_text.delta`, a refusal from
 * `response.refusal.delta`; function calls from `response.output_item.added`, their
 * argument deltas, and the whole arguments of `…arguments.done` / `output_item.done`
 * (which replace the deltas), and any call the final response lists that was not streamed.
 * `response.completed` and `response.incomplete` end the answer; `response.failed` and `error` fail it with the server's error. A stream that ends
 * before one of them was cut (`invalid-response`).
 */
const reader = (provider: string): StreamReader => {
  let streamedText = ""
  let refused = false
  let final: Json | undefined = undefined
  /** Calls in the order they began, found by item id or by `#<output_index>`. */
  const calls: Array<Call> = []
  const byKey = new Map<string, Call>()
  const keys = (event: Json, itemId: unknown) => [
    ...(text(itemId).length > 0 ? [text(itemId)] : []),
    ...(typeof event.output_index === "number" ? [`#${event.output_index}`] : [])
  ]
  const find = (event: Json, itemId: unknown) =>
    keys(event, itemId).map((key) => byKey.get(key)).find((call) => call !== undefined)
  const remember = (event: Json, item: Json) => {
    const whole = callOf(item)
    let call = find(event, item.id)
    if (call === undefined) {
      call = whole
      calls.push(call)
    } else {
      call.id = whole.id || call.id
      call.name = whole.name || call.name
      call.args = whole.args || call.args
    }
    for (const key of keys(event, item.id)) byKey.set(key, call)
  }

  const add = (event: Sse.Event): Either.Either<string, ChatModel.ModelError> => Either.flatMap(parseEvent(event, provider), (json) => read(event, json))

  const read = (event: Sse.Event, json: unknown): Either.Either<string, ChatModel.ModelError> => {
    // the event's name is the server's word: an `event: error` is an error, whatever its data says its type is
    if (event.event === "error") return Either.left(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
    if (!isObject(json)) return Either.right("")
    const type = text(json.type) || event.event
    const item = isObject(json.item) ? json.item : undefined
    switch (type) {
      case "error":
        return Either.left(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
      case "response.failed":
      case "response.completed":
      case "response.incomplete": {
        const response = { ...(isObject(json.response) ? json.response : {}), status: type.slice("response.".length) }
        const failure = unfinished(response, provider, "mid-stream")
        if (failure !== undefined) return Either.left(failure)
        final = response
        // a server that streamed nothing: the answer is the final response's output, emitted now
        return Either.right(calls.length === 0 && streamedText.length === 0 ? outputOf(response).text : "")
      }
      case "response.output_text.delta":
        streamedText += text(json.delta)
        return Either.right(text(json.delta))
      case "response.refusal.delta":
        refused = refused || text(json.delta).length > 0
        streamedText += text(json.delta)
        return Either.right(text(json.delta))
      case "response.output_item.added":
      case "response.output_item.done":
        if (item?.type === "function_call") remember(json, item)
        return Either.right("")
      case "response.function_call_arguments.delta": {
        const call = find(json, json.item_id)
        if (call !== undefined) call.args += text(json.delta)
        return Either.right("")
      }
      case "response.function_call_arguments.done": {
        const call = find(json, json.item_id)
        if (call !== undefined && typeof json.arguments === "string") call.args = json.arguments
        return Either.right("")
      }
      default:
        return Either.right("")
    }
  }

  const response = (): Either.Either<ChatModel.ChatResponse, ChatModel.ModelError> => {
    if (final === undefined) {
      return Either.left(invalid(`${provider}'s stream ended before the answer did (no response.completed): the connection was cut`))
    }
    const whole = outputOf(final)
    if (calls.length === 0 && streamedText.length === 0) return Either.right(toResponse(final, whole))
    const unstreamed = whole.calls.filter((call) => !calls.some((streamed) => streamed.id === call.id))
    return Either.right(toResponse(final, { text: streamedText, refused, calls: [...calls, ...unstreamed] }))
  }

  return { add, finished: () => final !== undefined, response }
}

/** The Responses wire format, asking for `model`; `strict` is sent on every tool. */
export const wire = (model: string, strict: boolean): WireFormat => ({
  body: requestBody(model, strict),
  decode,
  reader,
  ignores: {
    fields: ["stop"],
    why: "the Responses API has no stop sequences; use ChatCompletionsModel (OpenAI's Chat Completions API takes stop) if the answer must end at one"
  }
})
