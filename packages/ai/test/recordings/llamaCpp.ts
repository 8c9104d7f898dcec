/**
 * llama.cpp's `llama-server` on its OpenAI-compatible `/v1/chat/completions`, written from
 * its server sources (`tools/server`, formerly `examples/server`): chunks carry
 * `system_fingerprint` (the build) and the model alias (`gpt-3.5-turbo` unless `--alias` is
 * given), the last one `timings`. A failure after the headers is one more event: builds up
 * to mid-2025 send it as a bare `error:` field (`server_sent_event(sink, "error", …)`), later
 * ones as `data: {"error": …}`; the error object is `format_error_response`'s
 * `{ code, message, type }`.
 */

/** A streamed chunk as llama.cpp sends it. */
export const chunk = (delta: object, finish_reason: string | null = null) => ({
  choices: [{ finish_reason, index: 0, delta }],
  created: 1_755_443_394,
  id: "chatcmpl-Xq3b6eKq1lJcDq0",
  model: "gpt-3.5-turbo",
  system_fingerprint: "b5921-4a5686da",
  object: "chat.completion.chunk"
})

/** The first text, before the server fails. */
export const started = [chunk({ role: "assistant", content: null }), chunk({ content: "The" })]

/** `format_error_response` for a prompt longer than the context (ERROR_TYPE_EXCEED_CONTEXT_SIZE). */
export const exceedContext = {
  code: 400,
  message: "the request exceeds the available context size, try increasing it",
  type: "exceed_context_size_error",
  n_prompt_tokens: 5012,
  n_ctx: 4096
}

/** `format_error_response` for a failure of the server itself (ERROR_TYPE_SERVER). */
export const serverError = { code: 500, message: "Input prompt is too big compared to KV size. Please try increasing KV size.", type: "server_error" }
