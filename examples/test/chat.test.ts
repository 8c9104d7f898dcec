/**
 * examples/chat.ts: the wire of a chat endpoint as `useChat` meets it — a run that pauses, the
 * thread read back with its approval request, an approval that resumes it to its end, the same
 * approval refused, a reattach that replays.
 */
import { describe, expect, it } from "vitest"
import { run } from "./run.js"

describe("chat.ts", () => {
  it("prints the UI message streams of a pause, the thread a page opened again loads, its approval, a refused second approval and a reattach", async () => {
    const { lines } = await run("chat.ts")
    const output = lines.slice(3).join("\n").trimEnd()
    // the server logs where it listens, then the example prints its routes
    expect(lines[0]).toMatch(/ INFO \(#\d+\): Chat endpoint at http:\/\/127\.0\.0\.1:\d+\/api\/chat$/)
    expect(lines[1]).toMatch(
      /^chat endpoint: POST http:\/\/127\.0\.0\.1:\d+\/api\/chat, GET http:\/\/127\.0\.0\.1:\d+\/api\/chat\/:chatId\/stream, GET http:\/\/127\.0\.0\.1:\d+\/api\/chat\/:chatId\/messages$/
    )
    const [asked, thread, approved, refused, reattached] = output.split("\n\n")
    expect(asked).toBe(`POST /api/chat (a user message) → 200
  data: {"type":"start","messageId":"<run>"}
  data: {"type":"start-step"}
  data: {"type":"text-start","id":"text-1"}
  data: {"type":"text-delta","id":"text-1","delta":"Sending "}
  data: {"type":"text-delta","id":"text-1","delta":"it now."}
  data: {"type":"text-end","id":"text-1"}
  data: {"type":"tool-input-available","toolCallId":"t1","toolName":"transfer","input":{"to":"Ada","amount":250}}
  data: {"type":"tool-approval-request","toolCallId":"t1","approvalId":"<run>:1:t1","reason":"the needsApproval rule of transfer asked for approval of these arguments"}
  data: {"type":"finish-step"}
  data: {"type":"finish","finishReason":"tool-calls"}
  data: [DONE]`)
    // the thread, as a page opened again loads it: useChat's messages, the pending approval last, named as the stream named it
    expect(thread).toBe(`GET /api/chat/demo/messages (the thread) → 200
  {"id":"msg-0","role":"user","parts":[{"type":"text","text":"Send 250 to Ada"}]}
  {"id":"<run>","role":"assistant","parts":[{"type":"step-start"},{"type":"text","text":"Sending it now.","state":"done"},{"type":"tool-transfer","toolCallId":"t1","state":"approval-requested","input":{"to":"Ada","amount":250},"approval":{"id":"<run>:1:t1","requestReason":"the needsApproval rule of transfer asked for approval of these arguments"}}]}`)
    expect(approved).toBe(`POST /api/chat (the approval) → 200
  data: {"type":"start","messageId":"<run>"}
  data: {"type":"tool-input-available","toolCallId":"t1","toolName":"transfer","input":{"to":"Ada","amount":250}}
  data: {"type":"tool-output-available","toolCallId":"t1","output":"sent €250 to Ada"}
  data: {"type":"start-step"}
  data: {"type":"text-start","id":"text-2"}
  data: {"type":"text-delta","id":"text-2","delta":"Done: "}
  data: {"type":"text-delta","id":"text-2","delta":"sent €250 to Ada"}
  data: {"type":"text-delta","id":"text-2","delta":"."}
  data: {"type":"text-end","id":"text-2"}
  data: {"type":"finish-step"}
  data: {"type":"finish","finishReason":"stop"}
  data: [DONE]`)
    // the refusal as useChat gets it (no Accept: application/json): its sentence, which it shows as its error
    expect(refused).toBe(`POST /api/chat (the same approval again) → 409
  Run <run> was already decided by local: it is completed now`)
    // the reattach: the message's two segments, as one stream (one start, one end)
    const events = (block: string) => block.split("\n").slice(1)
    expect(events(reattached)).toEqual([...events(asked).slice(0, -2), ...events(approved).slice(1)])
    expect(reattached.split("\n")[0]).toBe("GET /api/chat/demo/stream (a reattach) → 200")
  }, 60_000)

  it("--cluster: the same wire, its runs driven by an embedded cluster runner (ClusterChat.driver); the pause is the record's revision 2 (a durable store records the start)", async () => {
    const [plain, cluster] = await Promise.all([run("chat.ts"), run("chat.ts --cluster", "", {}, 90_000)])
    const wire = (lines: ReadonlyArray<string>) => lines.slice(1).join("\n").replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:PORT")
    expect(wire(cluster.lines)).toContain(`"approvalId":"<run>:2:t1"`)
    expect(wire(cluster.lines).replaceAll("<run>:2:t1", "<run>:1:t1")).toBe(wire(plain.lines))
  }, 120_000)
})
