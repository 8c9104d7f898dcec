/**
 * Answers of servers whose reasoning tokens are in their total only, not in the output count,
 * in the shapes they send (docs/decisions/026): xAI's Chat Completions (`completion_tokens`
 * without `completion_tokens_details.reasoning_tokens`, `total_tokens` with them: 32 + 9 + 94 =
 * 135, its own documented example), xAI's Responses API (11 + 1 + 312 = 324), and Gemini's
 * OpenAI-compatible endpoint (`completion_tokens` is the candidates' count, `total_tokens`
 * adds the thoughts: 30 + 7 + 375 = 412). Each answers "It is sunny in Oslo.".
 */
const sunny = "It is sunny in Oslo."

/** xAI, `POST /v1/chat/completions`, grok-3-mini, not streamed. */
export const xaiCompletion = {
  id: "a3d1008e-4544-40d4-d075-11527e794e4a",
  object: "chat.completion",
  created: 1_752_854_522,
  model: "grok-3-mini",
  choices: [{
    index: 0,
    message: { role: "assistant", content: sunny, reasoning_content: "The user asks about Oslo…", refusal: null },
    finish_reason: "stop"
  }],
  usage: {
    prompt_tokens: 32,
    completion_tokens: 9,
    total_tokens: 135,
    prompt_tokens_details: { text_tokens: 32, audio_tokens: 0, image_tokens: 0, cached_tokens: 6 },
    completion_tokens_details: { reasoning_tokens: 94, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
    num_sources_used: 0
  },
  system_fingerprint: "fp_3a7881249c"
}

const xaiChunk = (delta: object, finish_reason: string | null, usage?: object) => ({
  id: "a3d1008e-4544-40d4-d075-11527e794e4a",
  object: "chat.completion.chunk",
  created: 1_752_854_522,
  model: "grok-3-mini",
  choices: [{ index: 0, delta, finish_reason }],
  ...(usage === undefined ? {} : { usage }),
  system_fingerprint: "fp_3a7881249c"
})

/** The same answer streamed: reasoning deltas first, the usage with the last chunk. */
export const xaiStream = [
  xaiChunk({ role: "assistant", reasoning_content: "The user asks" }, null),
  xaiChunk({ reasoning_content: " about Oslo…" }, null),
  xaiChunk({ content: "It is sunny " }, null),
  xaiChunk({ content: "in Oslo." }, null),
  xaiChunk({}, "stop", xaiCompletion.usage),
  "[DONE]"
]

/** Gemini's OpenAI-compatible endpoint (`…/v1beta/openai/chat/completions`), gemini-2.5-flash, not streamed. */
export const geminiCompletion = {
  choices: [{ finish_reason: "stop", index: 0, message: { content: sunny, role: "assistant" } }],
  created: 1_755_443_394,
  id: "wuGiaL3fDtKnz7IP5qmb0Ao",
  model: "gemini-2.5-flash",
  object: "chat.completion",
  usage: { completion_tokens: 7, prompt_tokens: 30, total_tokens: 412 }
}

const geminiChunk = (content: string, finish_reason: string | null, usage?: object) => ({
  choices: [{ delta: { content, role: "assistant" }, ...(finish_reason === null ? {} : { finish_reason }), index: 0 }],
  created: 1_755_443_394,
  id: "wuGiaL3fDtKnz7IP5qmb0Ao",
  model: "gemini-2.5-flash",
  object: "chat.completion.chunk",
  ...(usage === undefined ? {} : { usage })
})

/** The same answer streamed: the usage with the chunk that finishes. */
export const geminiStream = [
  geminiChunk("It is sunny ", null),
  geminiChunk("in Oslo.", "stop", geminiCompletion.usage),
  "[DONE]"
]

const xaiUsage = {
  input_tokens: 11,
  input_tokens_details: { cached_tokens: 5 },
  output_tokens: 1,
  output_tokens_details: { reasoning_tokens: 312 },
  total_tokens: 324
}

/** xAI, `POST /v1/responses`, grok-4-0709. */
export const xaiResponse = (status: "in_progress" | "completed") => ({
  id: "ad5663da-63e6-86c6-e0be-ff15effa8357",
  object: "response",
  created_at: 1_754_475_266,
  model: "grok-4-0709",
  status,
  output: status === "completed"
    ? [{
      id: "msg_ad5663da-63e6-86c6-e0be-ff15effa8357",
      type: "message",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: sunny, logprobs: null, annotations: [] }]
    }]
    : [],
  parallel_tool_calls: true,
  previous_response_id: null,
  temperature: null,
  tool_choice: "auto",
  tools: [],
  top_p: null,
  usage: status === "completed" ? xaiUsage : null,
  store: true,
  text: { format: { type: "text" } }
})

/** The same answer streamed (named events). */
export const xaiResponseStream = [
  { type: "response.created", sequence_number: 0, response: xaiResponse("in_progress") },
  { type: "response.output_text.delta", sequence_number: 1, item_id: "msg_ad5663da-63e6-86c6-e0be-ff15effa8357", output_index: 0, content_index: 0, delta: "It is sunny " },
  { type: "response.output_text.delta", sequence_number: 2, item_id: "msg_ad5663da-63e6-86c6-e0be-ff15effa8357", output_index: 0, content_index: 0, delta: "in Oslo." },
  { type: "response.completed", sequence_number: 3, response: xaiResponse("completed") }
]
