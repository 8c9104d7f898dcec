/**
 * examples/agui.ts: the wire of an AG-UI endpoint as `HttpAgent` meets it — a run that pauses
 * on an interrupt, an answer (approved with an edited amount) that resumes it to its end, the
 * same answer refused, a reattach that replays both AG-UI runs.
 */
import { describe, expect, it } from "vitest"
import { run } from "./run.js"

describe("agui.ts", () => {
  it("prints the AG-UI events of a pause, its answer, a refused second answer and a reattach", async () => {
    const { lines } = await run("agui.ts")
    // the server logs where it listens, then the example prints its routes
    expect(lines[0]).toMatch(/ INFO \(#\d+\): AG-UI endpoint at http:\/\/127\.0\.0\.1:\d+\/api\/agui$/)
    expect(lines[1]).toMatch(/^AG-UI endpoint: POST http:\/\/127\.0\.0\.1:\d+\/api\/agui, GET http:\/\/127\.0\.0\.1:\d+\/api\/agui\/:threadId\/stream$/)
    const [asked, answered, refused, reattached] = lines.slice(3).join("\n").trimEnd().split("\n\n")
    const events = (block: string) => block.split("\n").slice(1).map((line) => JSON.parse(line.trim().slice("data: ".length)))
    expect(asked!.split("\n")[0]).toBe("POST /api/agui (a user message) → 200")
    expect(events(asked!).map((event) => event.type)).toEqual([
      "RUN_STARTED",
      "STEP_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "STEP_FINISHED",
      "RUN_FINISHED"
    ])
    expect(events(asked!).at(-1).outcome.interrupts).toMatchObject([{ id: "<run>:1:t1", reason: "tool_approval", toolCallId: "t1" }])
    expect(answered).toBe(`POST /api/agui (the answer: approved, for 200) → 200
  data: {"type":"RUN_STARTED","threadId":"demo","runId":"run-2"}
  data: {"type":"STEP_STARTED","stepName":"step-1"}
  data: {"type":"TOOL_CALL_START","toolCallId":"t1","toolCallName":"transfer","parentMessageId":"<run>-1"}
  data: {"type":"TOOL_CALL_ARGS","toolCallId":"t1","delta":"{\\"to\\":\\"Ada\\",\\"amount\\":200}"}
  data: {"type":"TOOL_CALL_END","toolCallId":"t1"}
  data: {"type":"TOOL_CALL_RESULT","messageId":"<run>-result-t1","toolCallId":"t1","role":"tool","content":"sent €200 to Ada"}
  data: {"type":"STEP_FINISHED","stepName":"step-1"}
  data: {"type":"STEP_STARTED","stepName":"step-2"}
  data: {"type":"TEXT_MESSAGE_START","messageId":"<run>-2","role":"assistant"}
  data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"<run>-2","delta":"Done: "}
  data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"<run>-2","delta":"sent €200 to Ada"}
  data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"<run>-2","delta":"."}
  data: {"type":"TEXT_MESSAGE_END","messageId":"<run>-2"}
  data: {"type":"STEP_FINISHED","stepName":"step-2"}
  data: {"type":"RUN_FINISHED","threadId":"demo","runId":"run-2","outcome":{"type":"success"},"usage":[{"inputTokens":0,"outputTokens":0,"totalTokens":0}]}`)
    // the refusal as HttpAgent gets it (no Accept: application/json): its sentence
    expect(refused).toBe(`POST /api/agui (the same answer again) → 409
  Run <run> was already decided by local: it is completed now`)
    // the reattach: the run's two AG-UI runs, one after the other
    expect(reattached!.split("\n")[0]).toBe("GET /api/agui/demo/stream (a reattach) → 200")
    expect(events(reattached!)).toEqual([...events(asked!), ...events(answered!)])
  }, 60_000)
})
