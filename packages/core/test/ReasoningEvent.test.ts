/**
 * A model's reasoning in `ModelResponded`: its readable text, for a UI to show (the chat and
 * AG-UI endpoints send it); encrypted reasoning, which has no text, is not shown — its parts stay
 * in the history for the provider only.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { Agent, AgentEvent, ScriptedChatModel } from "../src/index.js"

const responded = (events: ReadonlyArray<AgentEvent.AgentEvent>) => events.filter((e) => e._tag === "ModelResponded")

describe("ModelResponded's reasoning", () => {
  it.effect("is the readable parts' text joined by a blank line; absent for encrypted-only reasoning and for none", () =>
    Effect.gen(function*() {
      const events: Array<AgentEvent.AgentEvent> = []
      const agent = Agent.make({})
      for (const input of ["readable", "encrypted", "none"]) {
        yield* AgentEvent.withSink((event) => void events.push(event))(Agent.run(agent, { input }))
      }
      const [readable, encrypted, none] = responded(events)
      expect(readable).toMatchObject({ text: "Oslo: sunny.", reasoning: "The user asks for Oslo.\n\nIt is sunny there." })
      expect(encrypted !== undefined && "reasoning" in encrypted).toBe(false)
      expect(none !== undefined && "reasoning" in none).toBe(false)
    }).pipe(Effect.provide(ScriptedChatModel.layer([
      {
        text: "Oslo: sunny.",
        reasoning: [
          { _tag: "Reasoning", provider: "anthropic", text: "The user asks for Oslo.", data: { type: "thinking", signature: "s1" } },
          { _tag: "Reasoning", provider: "anthropic", text: "", data: { type: "redacted_thinking", data: "x" } },
          { _tag: "Reasoning", provider: "anthropic", text: "It is sunny there.", data: { type: "thinking", signature: "s2" } }
        ]
      },
      { text: "Done.", reasoning: [{ _tag: "Reasoning", provider: "openai", text: "", data: { encrypted_content: "gAAAA" } }] },
      ScriptedChatModel.text("Plain.")
    ]))))
})
