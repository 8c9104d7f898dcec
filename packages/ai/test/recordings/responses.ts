/**
 * Responses API streams as OpenAI and compatible servers send them, written from OpenAI's
 * streaming-events reference and from streams observed in the wild: named SSE events
 * (`event: <type>`), the full envelope on `response.*` events, obfuscation padding on
 * deltas. Each recording is replayed through `OpenAiChatModel` by `OpenAiChatModel.test.ts`
 * and measured in `docs/decisions/020-own-responses-adapter.md`.
 */

/** The response object of `response.created` / `.completed` / `.failed` / `.incomplete`. */
export const envelope = (fields: {
  readonly status: "in_progress" | "completed" | "failed" | "incomplete"
  readonly output?: ReadonlyArray<object>
  readonly usage?: object | null
  readonly error?: object | null
  readonly incomplete_details?: object | null
}) => ({
  id: "resp_68a1f0c2b3e48193",
  object: "response",
  created_at: 1_755_443_394,
  status: fields.status,
  background: false,
  error: fields.error ?? null,
  incomplete_details: fields.incomplete_details ?? null,
  instructions: null,
  max_output_tokens: null,
  model: "gpt-4.1-mini-2025-04-14",
  output: fields.output ?? [],
  parallel_tool_calls: true,
  previous_response_id: null,
  reasoning: { effort: null, summary: null },
  service_tier: "default",
  store: true,
  temperature: 1,
  text: { format: { type: "text" }, verbosity: "medium" },
  tool_choice: "auto",
  tools: [],
  top_p: 1,
  truncation: "disabled",
  usage: fields.usage ?? null,
  user: null,
  metadata: {}
})

export const usage = (input: number, output: number, reasoning = 0) => ({
  input_tokens: input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: output,
  output_tokens_details: { reasoning_tokens: reasoning },
  total_tokens: input + output
})

const message = (text: string, status = "completed") => ({
  id: "msg_68a1f0c3",
  type: "message",
  status,
  content: status === "completed" ? [{ type: "output_text", annotations: [], logprobs: [], text }] : [],
  role: "assistant"
})

const functionCall = (n: number, callId: string, args: string, status = "completed") => ({
  id: `fc_68a1f0c${n}`,
  type: "function_call",
  status,
  arguments: args,
  call_id: callId,
  name: "get_weather"
})

/** Numbers the events 0, 1, 2, …, as OpenAI does. */
const numbered = (events: ReadonlyArray<object>) => events.map((event, i) => ({ ...event, sequence_number: i }))

const textEvents = (deltas: ReadonlyArray<string>) => {
  const text = deltas.join("")
  return [
    { type: "response.output_item.added", output_index: 0, item: message("", "in_progress") },
    {
      type: "response.content_part.added",
      item_id: "msg_68a1f0c3",
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", annotations: [], logprobs: [], text: "" }
    },
    ...deltas.map((delta) => ({
      type: "response.output_text.delta",
      item_id: "msg_68a1f0c3",
      output_index: 0,
      content_index: 0,
      delta,
      logprobs: [],
      obfuscation: "Xq3"
    })),
    { type: "response.output_text.done", item_id: "msg_68a1f0c3", output_index: 0, content_index: 0, text, logprobs: [] },
    {
      type: "response.content_part.done",
      item_id: "msg_68a1f0c3",
      output_index: 0,
      content_index: 0,
      part: { type: "output_text", annotations: [], logprobs: [], text }
    },
    { type: "response.output_item.done", output_index: 0, item: message(text) }
  ]
}

const created = [
  { type: "response.created", response: envelope({ status: "in_progress" }) },
  { type: "response.in_progress", response: envelope({ status: "in_progress" }) }
]

const sunny = ["It is", " sunny", " in Oslo."]

/** A plain answer in three deltas. */
export const text = numbered([
  ...created,
  ...textEvents(sunny),
  { type: "response.completed", response: envelope({ status: "completed", output: [message("It is sunny in Oslo.")], usage: usage(30, 7) }) }
])

/** Two parallel function calls, arguments in pieces, then `.done` events repeating them whole. */
export const parallelCalls = numbered([
  ...created,
  { type: "response.output_item.added", output_index: 0, item: functionCall(1, "call_oslo", "", "in_progress") },
  { type: "response.function_call_arguments.delta", item_id: "fc_68a1f0c1", output_index: 0, delta: "{\"city\":", obfuscation: "a1" },
  { type: "response.function_call_arguments.delta", item_id: "fc_68a1f0c1", output_index: 0, delta: "\"Oslo\"}", obfuscation: "b2" },
  { type: "response.function_call_arguments.done", item_id: "fc_68a1f0c1", output_index: 0, arguments: "{\"city\":\"Oslo\"}" },
  { type: "response.output_item.done", output_index: 0, item: functionCall(1, "call_oslo", "{\"city\":\"Oslo\"}") },
  { type: "response.output_item.added", output_index: 1, item: functionCall(2, "call_rome", "", "in_progress") },
  { type: "response.function_call_arguments.delta", item_id: "fc_68a1f0c2", output_index: 1, delta: "{\"city\":\"Rome\"}", obfuscation: "c3" },
  { type: "response.function_call_arguments.done", item_id: "fc_68a1f0c2", output_index: 1, arguments: "{\"city\":\"Rome\"}" },
  { type: "response.output_item.done", output_index: 1, item: functionCall(2, "call_rome", "{\"city\":\"Rome\"}") },
  {
    type: "response.completed",
    response: envelope({
      status: "completed",
      output: [functionCall(1, "call_oslo", "{\"city\":\"Oslo\"}"), functionCall(2, "call_rome", "{\"city\":\"Rome\"}")],
      usage: usage(20, 9)
    })
  }
])

/**
 * A call as compatible servers stream it: `output_item.added` without the `call_id`, argument
 * deltas naming only `item_id` (the item's `id`; no `output_index`), no `.done` events; only
 * `response.completed` lists the call with its `call_id`.
 */
export const callIdAtTheEnd = numbered([
  ...created,
  { type: "response.output_item.added", output_index: 0, item: { id: "fc_68a1f0c1", type: "function_call", status: "in_progress", arguments: "", name: "get_weather" } },
  { type: "response.function_call_arguments.delta", item_id: "fc_68a1f0c1", delta: "{\"city\":" },
  { type: "response.function_call_arguments.delta", item_id: "fc_68a1f0c1", delta: "\"Oslo\"}" },
  {
    type: "response.completed",
    response: envelope({ status: "completed", output: [functionCall(1, "call_oslo", "{\"city\":\"Oslo\"}")], usage: usage(20, 5) })
  }
])

/** `text` as older recordings and some compatible servers send it: no `sequence_number`. */
export const unnumbered = text.map(({ sequence_number: _, ...event }) => event)

/** Keep-alive events between deltas during a long turn. */
export const keepalive = numbered([
  ...created,
  { type: "keepalive" },
  ...textEvents(sunny).slice(0, 3),
  { type: "keepalive" },
  ...textEvents(sunny).slice(3),
  { type: "response.completed", response: envelope({ status: "completed", output: [message("It is sunny in Oslo.")], usage: usage(30, 7) }) }
])

/** A reasoning model: a reasoning item with a summary, then the answer. */
export const reasoning = numbered([
  ...created,
  { type: "response.output_item.added", output_index: 0, item: { id: "rs_68a1", type: "reasoning", summary: [] } },
  { type: "response.reasoning_summary_part.added", item_id: "rs_68a1", output_index: 0, summary_index: 0, part: { type: "summary_text", text: "" } },
  { type: "response.reasoning_summary_text.delta", item_id: "rs_68a1", output_index: 0, summary_index: 0, delta: "Weather question.", obfuscation: "z" },
  { type: "response.reasoning_summary_text.done", item_id: "rs_68a1", output_index: 0, summary_index: 0, text: "Weather question." },
  { type: "response.reasoning_summary_part.done", item_id: "rs_68a1", output_index: 0, summary_index: 0, part: { type: "summary_text", text: "Weather question." } },
  { type: "response.output_item.done", output_index: 0, item: { id: "rs_68a1", type: "reasoning", summary: [{ type: "summary_text", text: "Weather question." }] } },
  ...textEvents(sunny).map((event) => ({ ...event, output_index: 1 })),
  { type: "response.completed", response: envelope({ status: "completed", output: [message("It is sunny in Oslo.")], usage: usage(30, 27, 20) }) }
])

/** The model refuses: a `refusal` content part, streamed as `response.refusal.delta`s. */
export const refusal = numbered([
  ...created,
  { type: "response.output_item.added", output_index: 0, item: message("", "in_progress") },
  { type: "response.content_part.added", item_id: "msg_68a1f0c3", output_index: 0, content_index: 0, part: { type: "refusal", refusal: "" } },
  { type: "response.refusal.delta", item_id: "msg_68a1f0c3", output_index: 0, content_index: 0, delta: "I'm sorry, " },
  { type: "response.refusal.delta", item_id: "msg_68a1f0c3", output_index: 0, content_index: 0, delta: "I can't help with that." },
  { type: "response.refusal.done", item_id: "msg_68a1f0c3", output_index: 0, content_index: 0, refusal: "I'm sorry, I can't help with that." },
  {
    type: "response.output_item.done",
    output_index: 0,
    item: { ...message(""), content: [{ type: "refusal", refusal: "I'm sorry, I can't help with that." }] }
  },
  { type: "response.completed", response: envelope({ status: "completed", output: [], usage: usage(25, 9) }) }
])

/** Cut off by `max_output_tokens`. */
export const incomplete = numbered([
  ...created,
  ...textEvents(["It is", " sunny"]),
  {
    type: "response.incomplete",
    response: envelope({
      status: "incomplete",
      incomplete_details: { reason: "max_output_tokens" },
      output: [message("It is sunny")],
      usage: usage(30, 2)
    })
  }
])

/** The in-stream `error` event as OpenAI really sends it: code and message nested under `error`. */
export const errorNested = numbered([
  ...created,
  {
    type: "error",
    error: {
      type: "server_error",
      code: "server_error",
      message: "The server had an error processing your request. Sorry about that! You can retry your request.",
      param: null
    }
  }
])

/** The in-stream `error` event in the reference's flat shape, a code outside the generated schema's list. */
export const errorFlat = numbered([
  ...created,
  { type: "error", code: "rate_limit_exceeded", message: "Rate limit reached for gpt-4.1-mini on tokens per min (TPM).", param: null }
])

/** `response.failed` with a code the generated schema knows. */
export const failedServerError = numbered([
  ...created,
  {
    type: "response.failed",
    response: envelope({
      status: "failed",
      error: { code: "server_error", message: "An error occurred while processing your request. You can retry your request." },
      usage: null
    })
  }
])

/** `response.failed` with a code outside the generated schema. */
export const failedUnknownCode = numbered([
  ...created,
  {
    type: "response.failed",
    response: envelope({
      status: "failed",
      error: { code: "context_length_exceeded", message: "Your input exceeds the context window of this model." },
      usage: null
    })
  }
])

/** The connection drops mid-answer: no terminal event. */
export const cut = text.slice(0, 6)
