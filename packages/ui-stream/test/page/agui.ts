/**
 * An AG-UI page as an app writes one, without a framework: `HttpAgent` of `@ag-ui/client` at
 * `/api/agui`, whose `connect` reads the thread's reattach stream, so that the page opened on a
 * thread shows its last run (and answers its interrupts). Interrupts get Approve / Reject
 * buttons; an answer is the next run's `resume`. The thread's id is the page's `?thread=`.
 */
import { HttpAgent, type Message, type RunAgentInput, runHttpRequest, transformHttpEventStream } from "@ag-ui/client"

class AgentfxAgent extends HttpAgent {
  protected override connect(input: RunAgentInput): ReturnType<HttpAgent["run"]> {
    return transformHttpEventStream(runHttpRequest(() => this.fetch(`${this.url}/${encodeURIComponent(input.threadId)}/stream`, { headers: this.headers })))
  }
}

const threadId = new URLSearchParams(location.search).get("thread") ?? "thread"
const agent = new AgentfxAgent({ url: "/api/agui", threadId })
let status = "ready"
let error: string | undefined

const element = <K extends keyof HTMLElementTagNameMap>(tag: K, attributes: Record<string, string>, ...children: Array<Node | string>) => {
  const node = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value)
  node.append(...children)
  return node
}

/** A tool call's state: answered (its result), waiting for a person, or running. */
const stateOf = (callId: string) =>
  agent.messages.some((m) => m.role === "tool" && m.toolCallId === callId)
    ? "done"
    : agent.pendingInterrupts.some((i) => i.toolCallId === callId)
    ? "interrupted"
    : "running"

const view = (message: Message) => {
  const item = element("li", { "data-role": message.role, "data-id": message.id })
  if (message.role === "tool") {
    item.append(element("span", { class: "result", "data-call": message.toolCallId }, String(message.content)))
    return item
  }
  if (typeof message.content === "string" && message.content.length > 0) item.append(element("p", { class: "text" }, message.content))
  for (const call of message.role === "assistant" ? message.toolCalls ?? [] : []) {
    const tool = element("div", { class: "tool", "data-call": call.id, "data-state": stateOf(call.id) }, element("code", {}, `${call.function.name}(${call.function.arguments})`))
    const interrupt = agent.pendingInterrupts.find((i) => i.toolCallId === call.id)
    if (interrupt !== undefined) {
      const approve = element("button", { class: "approve" }, "Approve")
      const reject = element("button", { class: "reject" }, "Reject")
      approve.onclick = () => void answer(interrupt.id, { type: "approve" })
      reject.onclick = () => void answer(interrupt.id, { type: "reject", reason: "rejected in the page" })
      tool.append(element("span", { class: "why" }, interrupt.message ?? ""), approve, reject)
    }
    item.append(tool)
  }
  return item
}

const render = () => {
  document.querySelector("#messages")!.replaceChildren(...agent.messages.map(view))
  document.querySelector("#status")!.textContent = status
  const shown = document.querySelector("#error")
  if (error === undefined) shown?.remove()
  else if (shown === null) document.body.append(element("p", { id: "error" }, error))
  else shown.textContent = error
}

const run = async (parameters?: Parameters<HttpAgent["runAgent"]>[0]) => {
  status = "streaming"
  error = undefined
  render()
  try {
    await agent.runAgent(parameters)
  } catch (failed) {
    error = failed instanceof Error ? failed.message : String(failed)
  }
  status = "ready"
  render()
}

const answer = (interruptId: string, payload: unknown) =>
  // the client asks that every open interrupt be answered: this page's have one at a time
  run({ resume: [{ interruptId, status: "resolved", payload }] })

agent.subscribe({ onMessagesChanged: render, onRunFinalized: render })

document.body.append(
  element("ol", { id: "messages" }),
  element("form", { id: "form" }, element("input", { id: "input" }), element("button", { id: "send", type: "submit" }, "Send")),
  element("p", { id: "status" }, status)
)
document.querySelector("#form")!.addEventListener("submit", (event) => {
  event.preventDefault()
  const input = document.querySelector<HTMLInputElement>("#input")!
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: input.value })
  input.value = ""
  void run()
})
// the thread's last run, when there is one: a page opened on a paused thread shows its interrupts
status = "connecting"
void agent.connectAgent().catch((failed: Error) => (error = failed.message)).finally(() => {
  status = "ready"
  render()
})
