/**
 * Credentials out of what leaves an adapter: `ModelError` messages (masked by `Mask` of
 * `@agentfx/core`, then cut).
 */
import { ChatModel } from "@agentfx/core"

/** The most characters of a `ModelError`'s message: a server's own message is quoted up to there. */
export const messageLimit = 1_000

/**
 * The same `ModelError` with its message masked, then cut at {@link messageLimit} characters
 * (`…`) — in that order, so that a cut never leaves part of a credential the mask would have
 * hidden whole. The error itself when nothing changes.
 */
export const maskError = (mask: (text: string) => string) => (error: ChatModel.ModelError): ChatModel.ModelError => {
  const masked = mask(error.message)
  const message = masked.length > messageLimit ? `${masked.slice(0, messageLimit)}…` : masked
  if (message === error.message) return error
  return new ChatModel.ModelError({
    reason: error.reason,
    message,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryAfterMillis === undefined ? {} : { retryAfterMillis: error.retryAfterMillis })
  })
}
