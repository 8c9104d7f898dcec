/**
 * Answers of reasoning models that call a tool, in the shapes their servers send them: what
 * the next request must send back (docs/decisions/097). Written from each provider's API
 * reference and observed traffic; ids, signatures and encrypted content shortened.
 *
 * - Anthropic, extended thinking with tools: a `thinking` block (its text and `signature`), a
 *   `redacted_thinking` block (its encrypted `data`), then `tool_use`. Streamed: the thinking
 *   block's `thinking_delta`s and `signature_delta`, the redacted block whole in its start.
 * - OpenAI Responses, a reasoning model asked for `include: ["reasoning.encrypted_content"]`:
 *   a `reasoning` item (summary, `encrypted_content`) before the `function_call`. Streamed: the
 *   item's `output_item.added` has no encrypted content yet, its `output_item.done` has it.
 * - DeepSeek's Chat Completions (`deepseek-reasoner`): `reasoning_content` beside the tool
 *   calls, which it requires back on that assistant message.
 */
import { envelope, usage } from "./responses.js"

export const anthropicThinking = { type: "thinking", thinking: "The user wants Oslo's weather. I will call get_weather.", signature: "EuYBCkQYAiJAgCs1le6/Pol5" }
export const anthropicRedacted = { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP" }

/** `POST /v1/messages` with `thinking` enabled, not streamed. */
export const anthropicMessage = {
  id: "msg_01AgxbSrKpV6kwqhUFSeVvH4",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5-20250929",
  content: [
    anthropicThinking,
    anthropicRedacted,
    { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: { city: "Oslo" } }
  ],
  stop_reason: "tool_use",
  stop_sequence: null,
  usage: { input_tokens: 412, output_tokens: 98 }
}

/** The same answer streamed. */
export const anthropicStream = [
  { type: "message_start", message: { ...anthropicMessage, content: [], stop_reason: null, usage: { input_tokens: 412, output_tokens: 1 } } },
  { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "The user wants Oslo's weather. " } },
  { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "I will call get_weather." } },
  { type: "content_block_delta", index: 0, delta: { type: "signature_delta", signature: anthropicThinking.signature } },
  { type: "content_block_stop", index: 0 },
  { type: "content_block_start", index: 1, content_block: anthropicRedacted },
  { type: "content_block_stop", index: 1 },
  { type: "content_block_start", index: 2, content_block: { type: "tool_use", id: "toolu_01A09q90qw90lq917835lq9", name: "get_weather", input: {} } },
  { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "{\"city\": \"Oslo\"}" } },
  { type: "content_block_stop", index: 2 },
  { type: "message_delta", delta: { stop_reason: "tool_use", stop_sequence: null }, usage: { output_tokens: 98 } },
  { type: "message_stop" }
]

/** The reasoning item as OpenAI sends it in `output` (with its `id`; the adapter keeps it without). */
export const openAiReasoningItem = {
  id: "rs_6820f383d7c08191846711c5df8233bc0ac5ba57aafcbac7",
  type: "reasoning",
  summary: [{ type: "summary_text", text: "**Checking the weather**\n\nThe user asks about Oslo." }],
  encrypted_content: "gAAAAABoIPOEx7gkNUwYSSGUovGafW_sjtwiLs8K1Dwxd7NbfJkwQ6F3i"
}

const openAiCall = {
  id: "fc_6820f3855a0c81918a1d5b31c7a2b7d40ac5ba57aafcbac7",
  type: "function_call",
  status: "completed",
  arguments: "{\"city\":\"Oslo\"}",
  call_id: "call_4ynxfVx3dZyHZ5tDmjBnmXSQ",
  name: "get_weather"
}

/** `POST /v1/responses`, o4-mini, not streamed. */
export const openAiResponse = { ...envelope({ status: "completed", output: [openAiReasoningItem, openAiCall], usage: usage(81, 276, 256) }), model: "o4-mini-2025-04-16" }

/** The same answer streamed. */
export const openAiStream = [
  { type: "response.created", sequence_number: 0, response: { ...envelope({ status: "in_progress" }), model: "o4-mini-2025-04-16" } },
  { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { id: openAiReasoningItem.id, type: "reasoning", summary: [] } },
  {
    type: "response.reasoning_summary_text.delta",
    sequence_number: 2,
    item_id: openAiReasoningItem.id,
    output_index: 0,
    summary_index: 0,
    delta: "**Checking the weather**\n\nThe user asks about Oslo."
  },
  { type: "response.output_item.done", sequence_number: 3, output_index: 0, item: openAiReasoningItem },
  { type: "response.output_item.added", sequence_number: 4, output_index: 1, item: { ...openAiCall, status: "in_progress", arguments: "" } },
  { type: "response.function_call_arguments.delta", sequence_number: 5, item_id: openAiCall.id, output_index: 1, delta: "{\"city\":\"Oslo\"}" },
  { type: "response.function_call_arguments.done", sequence_number: 6, item_id: openAiCall.id, output_index: 1, arguments: "{\"city\":\"Oslo\"}" },
  { type: "response.output_item.done", sequence_number: 7, output_index: 1, item: openAiCall },
  { type: "response.completed", sequence_number: 8, response: openAiResponse }
]

const deepSeekCall = { index: 0, id: "call_0_8b3c6f0e", type: "function", function: { name: "get_weather", arguments: "{\"city\":\"Oslo\"}" } }

/** `POST /chat/completions`, deepseek-reasoner, not streamed. */
export const deepSeekCompletion = {
  id: "930c60df-bf64-41c9-a88e-3ec75f81e00e",
  object: "chat.completion",
  created: 1_757_000_000,
  model: "deepseek-reasoner",
  choices: [{
    index: 0,
    message: { role: "assistant", content: "", reasoning_content: "The user asks for Oslo's weather; get_weather gives it.", tool_calls: [deepSeekCall] },
    logprobs: null,
    finish_reason: "tool_calls"
  }],
  usage: { prompt_tokens: 320, completion_tokens: 64, total_tokens: 384, completion_tokens_details: { reasoning_tokens: 41 } }
}

const deepSeekChunk = (delta: object, finish_reason: string | null = null, extra: object = {}) => ({
  id: "930c60df-bf64-41c9-a88e-3ec75f81e00e",
  object: "chat.completion.chunk",
  created: 1_757_000_000,
  model: "deepseek-reasoner",
  choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  ...extra
})

/** The same answer streamed: the reasoning in deltas, then the call. */
export const deepSeekStream = [
  deepSeekChunk({ role: "assistant", content: null, reasoning_content: "" }),
  deepSeekChunk({ reasoning_content: "The user asks for Oslo's weather; " }),
  deepSeekChunk({ reasoning_content: "get_weather gives it." }),
  deepSeekChunk({ content: null, tool_calls: [deepSeekCall] }),
  deepSeekChunk({}, "tool_calls", { usage: deepSeekCompletion.usage }),
  "[DONE]"
]
