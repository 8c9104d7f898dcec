/**
 * Bad requests to the chat endpoint: each a 400 `InvalidRequest` that names the problem, and
 * nothing runs (the model is never asked).
 */
import { ScriptedChatModel } from "@agentfx/core"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { payments, post, serve, type Served } from "./fixtures.js"

let served: Served
let asked = 0
beforeAll(async () => {
  served = await serve(payments().agent, ScriptedChatModel.layer(() => Effect.sync(() => {
    asked += 1
    return ScriptedChatModel.text("Hello.")
  })))
})
afterAll(() => served.close())

const user = (text: string) => ({ id: "u1", role: "user", parts: [{ type: "text", text }] })
/** A request whose last message's part nests `depth` arrays deep (as text: `JSON.stringify` would overflow). */
const deep = (depth: number) =>
  `{"id":"c","messages":[{"id":"a","role":"assistant","parts":[{"type":"tool-transfer","toolCallId":"t1","state":"approval-responded","approval":${"[".repeat(depth)}${"]".repeat(depth)}}]}]}`

const cases: ReadonlyArray<readonly [string, unknown, string, Record<string, string>?]> = [
  ["not JSON", "{\"id\": ", "The body is not JSON: "],
  ["not sent as JSON", JSON.stringify({ id: "c", messages: [user("hi")] }), "Send the chat request as application/json (its content type is \"text/plain\")", { "content-type": "text/plain" }],
  ["no chat id", { messages: [user("hi")] }, "The body is not a chat request: "],
  ["no message", { id: "c", messages: [] }, "The body is not a chat request: "],
  ["a regeneration", { id: "c", messages: [user("hi")], trigger: "regenerate-message" }, "Regenerating a message is not supported"],
  ["a last message that is not one", { id: "c", messages: [user("hi"), { id: "x", role: "robot", parts: [] }] }, "The last message (messages[1]) is not a message: "],
  ["a system message last", { id: "c", messages: [{ id: "s", role: "system", parts: [{ type: "text", text: "be brief" }] }] }, "The last message (messages[0]) is a system message: send a user message"],
  ["a user message without text", { id: "c", messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "  " }] }] }, "The last message (messages[0]) has no text"],
  ["a part that is neither text nor a file", { id: "c", messages: [{ id: "u", role: "user", parts: [{ type: "reasoning", text: "hm" }, { type: "text", text: "this?" }] }] }, "messages[0].parts[0] is not a text or file part (reasoning): agentfx reads text and files"],
  ["a file part without its url", { id: "c", messages: [{ id: "u", role: "user", parts: [{ type: "file", mediaType: "image/png" }] }] }, "messages[0].parts[0] is not a file part: "],
  ["a file whose data: URL is not base64-encoded", { id: "c", messages: [{ id: "u", role: "user", parts: [{ type: "file", mediaType: "image/png", url: "data:," }, { type: "text", text: "this?" }] }] }, "messages[0].parts[0]: its data: URL is not base64-encoded (no \";base64\" before the comma): send data:<media type>;base64,<the file's base64>, as useChat does"],
  ["a file whose data: URL holds broken base64, after a text part, in a later message", {
    id: "c",
    messages: [user("hi"), { id: "a", role: "assistant", parts: [{ type: "text", text: "Hello." }] }, {
      id: "u2",
      role: "user",
      parts: [{ type: "text", text: "this?" }, { type: "file", mediaType: "image/png", filename: "dot.png", url: "data:image/png;base64,iVBO@@@=" }]
    }]
  }, "messages[2].parts[1] (\"dot.png\"): the data of its data: URL is not base64 (A–Z, a–z, 0–9, + and /, then = padding)"],
  ["a data: URL without its data", { id: "c", messages: [{ id: "u", role: "user", parts: [{ type: "file", mediaType: "image/png", url: "data:image/png;base64" }] }] }, "messages[0].parts[0]: its url is a data: URL without data (it has no comma): send data:<media type>;base64,<the file's base64>"],
  ["a file at a URL that is not absolute", { id: "c", messages: [{ id: "u", role: "user", parts: [{ type: "text", text: "this?" }, { type: "file", mediaType: "image/png", url: "/x.png" }] }] }, "messages[0].parts[1]: its url \"/x.png\" is neither a data: URL nor an absolute URL (https://…)"],
  ["a file without a media type", { id: "c", messages: [{ id: "u", role: "user", parts: [{ type: "file", mediaType: "", url: "https://example.com/x.png" }] }] }, "messages[0].parts[0]: its mediaType \"\" is not a media type: give type/subtype, e.g. image/png or application/pdf"],
  ["an assistant message without approval responses", { id: "c", messages: [user("hi"), { id: "a", role: "assistant", parts: [{ type: "text", text: "Hello." }] }] }, "The last message (messages[1]) is the assistant's, with no approval response"],
  ["an approval id this endpoint never sent", {
    id: "c",
    messages: [{ id: "a", role: "assistant", parts: [{ type: "tool-transfer", toolCallId: "t1", state: "approval-responded", input: {}, approval: { id: "approve-all", approved: true } }] }]
  }, "messages[0].parts[0]: the approval id \"approve-all\" is not one this endpoint sent for call \"t1\""],
  ["an approval response without its answer", {
    id: "c",
    messages: [{ id: "a", role: "assistant", parts: [{ type: "tool-transfer", toolCallId: "t1", state: "approval-responded", input: {}, approval: { id: "r:1:t1" } }] }]
  }, "messages[0].parts[0] is not an approval response: "],
  ["a body nested 100,000 levels deep", deep(100_000), "The body nests deeper than 72 levels"]
]

describe("Chat requests", () => {
  for (const [name, body, problem, headers] of cases) {
    it(`${name}: 400 naming the problem, nothing runs`, async () => {
      const reply = await post(served.origin, body, headers)
      expect(reply.status).toBe(400)
      const error = JSON.parse(reply.body)
      expect(error._tag).toBe("InvalidRequest")
      expect(error.message.startsWith(problem)).toBe(true)
      expect(asked).toBe(0)
    })
  }

  it("a shape error says where: the missing field", async () => {
    const reply = await post(served.origin, { messages: [user("hi")] })
    expect(JSON.parse(reply.body).message).toContain("Missing key\n  at [\"id\"]")
  })
})
