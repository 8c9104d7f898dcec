/**
 * Whether the conversation in memory is the one a checkpoint saw, and if not, where the two
 * part: the refusal a resume gives before it claims anything.
 */
import { ConversationDiverged } from "../AgentError.js"
import type { Message } from "../Message.js"

/** `ConversationDiverged` naming the first message where `stored` and `expected` differ, or `undefined` when they are alike. */
export const divergence = (
  conversationId: string,
  stored: ReadonlyArray<Message>,
  expected: ReadonlyArray<Message>
): ConversationDiverged | undefined => {
  const longest = Math.max(stored.length, expected.length)
  for (let i = 0; i < longest; i++) {
    if (i >= stored.length || i >= expected.length || JSON.stringify(stored[i]) !== JSON.stringify(expected[i])) {
      return new ConversationDiverged({ conversationId, expectedMessages: expected.length, foundMessages: stored.length, firstDifference: i + 1 })
    }
  }
  return undefined
}
