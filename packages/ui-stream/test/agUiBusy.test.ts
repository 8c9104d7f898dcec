/**
 * A second message while a thread's run works (decision 173), read by AG-UI's own client
 * (`HttpAgent` of `@ag-ui/client`): a steered message is answered with the running run's events,
 * a steer racing a pause is refused (409, nothing written), an interrupted run ends with
 * `RUN_ERROR` coded `TurnInterrupted` and the new message's run streams.
 */
import type { Agent } from "@agentfx/core"
import { Effect, Layer } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { AgUi } from "../src/index.js"
import { client, warnings } from "./agUiFixtures.js"
import { busyAgent, lines, startWatched, until } from "./busyFixtures.js"

let close: (() => Promise<void>) | undefined
afterEach(async () => {
  await close?.()
  close = undefined
})

const user = (text: string) => ({ id: `u-${text}`, role: "user" as const, content: text })

const serve = async (policy: Agent.OnConversationBusy) => {
  const busy = busyAgent(policy)
  const served = await startWatched((stores) => AgUi.serve({ agent: busy.agent }).pipe(Layer.provide(busy.model), Layer.provide(stores)))
  close = served.close
  const url = `${served.origin}/api/agui`
  /** A client of the thread whose first run's tool works. */
  const working = async (threadId: string) => {
    const first = client({ ...served, url }, threadId)
    first.agent.addMessage(user("Report please"))
    const running = first.agent.runAgent({ runId: "run-1" }).then(() => "finished", (error: Error) => error.message)
    await until(() => first.events.some((event) => event.type === "TOOL_CALL_START"))
    return { ...first, running }
  }
  const memory = (threadId: string) => Effect.runPromise(served.memory.get(threadId)).then(lines)
  return { ...busy, served: { ...served, url }, offered: served.offered, working, memory }
}

describe("AgUi, a second message while a run works", () => {
  it("steer: the second message joins the running run; its request gets that run's events, which answer both", async () => {
    const served = await serve("steer")
    const first = await served.working("t-steer")
    const second = client(served.served, "t-steer")
    second.agent.addMessage(user("Make it short"))
    const steered = second.agent.runAgent({ runId: "run-2" })
    await served.offered
    served.release()
    await Promise.all([steered, first.running])
    const text = (events: ReadonlyArray<any>) => events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta)
    expect(text(second.events)).toEqual(["Answered: Report please + Make it short"])
    expect(second.events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } })
    expect(second.agent.messages.at(-1)).toMatchObject({ role: "assistant", content: "Answered: Report please + Make it short" })
    expect(served.requests).toEqual([
      ["user:Report please"],
      ["user:Report please", "assistant:+calls", "result:report ready", "user:Make it short"]
    ])
    expect(warnings()).toEqual([])
  })

  it("steer racing a pause: 409 SteerRefused naming the paused run; nothing written", async () => {
    const served = await serve("steer")
    const first = client(served.served, "t-race")
    first.agent.addMessage(user("Mail the report"))
    const running = first.agent.runAgent({ runId: "run-1" })
    await until(() => first.events.some((event) => event.type === "TOOL_CALL_START"))
    const second = client(served.served, "t-race")
    second.agent.addMessage(user("To Ada too"))
    const refused = second.agent.runAgent({ runId: "run-2" }).then(() => "ran", (error: Error) => error.message)
    await served.offered
    served.release()
    await running
    expect(await refused).toMatch(/^HTTP 409: Thread t-race waits for a person: its running run \S+ paused before it took your message, and nothing was written; answer its interrupts, then send the message again$/)
    expect(first.events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "interrupt" } })
    expect((await served.memory("t-race")).some((line) => line.includes("To Ada too"))).toBe(false)
  })

  it("interrupt: the running run ends with RUN_ERROR coded TurnInterrupted; the new message's run streams", async () => {
    const served = await serve("interrupt")
    const first = await served.working("t-interrupt")
    const second = client(served.served, "t-interrupt")
    second.agent.addMessage(user("Cancel that"))
    await second.agent.runAgent({ runId: "run-2" })
    await first.running
    expect(first.events.at(-1)).toMatchObject({
      type: "RUN_ERROR",
      code: "TurnInterrupted",
      message: expect.stringMatching(/was cancelled: run "\S+" took conversation "t-interrupt" over \(onConversationBusy: "interrupt"\)/)
    })
    expect(second.events.at(-1)).toMatchObject({ type: "RUN_FINISHED", outcome: { type: "success" } })
    expect(second.agent.messages.at(-1)).toMatchObject({ role: "assistant", content: "Answered: Report please + Cancel that" })
  })
})
