/**
 * A chat page as an app writes one: `useChat` of `@ai-sdk/react` with the AI SDK's own
 * `DefaultChatTransport` (at its default address, `/api/chat`), unchanged. Approval requests
 * get Approve / Deny buttons; answered, the chat sends them by itself
 * (`lastAssistantMessageIsCompleteWithApprovalResponses`). The page opens with the chat's thread
 * (`GET /api/chat/:chatId/messages`, its pending approvals included) as `useChat`'s `messages`,
 * and `resume: true` reattaches to the chat's last message, which goes on live when it still
 * runs. The chat's id is the page's `?chat=`.
 */
import { useChat } from "@ai-sdk/react"
import { DefaultChatTransport, getToolName, isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses, type UIMessage } from "ai"
import { useState } from "react"
import { createRoot } from "react-dom/client"

type Part = UIMessage["parts"][number]

const chatId = new URLSearchParams(location.search).get("chat") ?? "chat"

function Tool({ part, answer }: { readonly part: Part; readonly answer: (id: string, approved: boolean) => void }) {
  if (!isToolUIPart(part)) return null
  return (
    <div className="tool" data-call={part.toolCallId} data-state={part.state}>
      <code>{getToolName(part)}({JSON.stringify(part.input)})</code>
      {part.state === "approval-requested" && (
        <>
          <button className="approve" onClick={() => answer(part.approval.id, true)}>Approve</button>
          <button className="deny" onClick={() => answer(part.approval.id, false)}>Deny</button>
        </>
      )}
      {part.state === "output-available" && <span className="output">{JSON.stringify(part.output)}</span>}
      {part.state === "output-denied" && <span className="output">denied</span>}
    </div>
  )
}

function App({ initial, loadError }: { readonly initial: Array<UIMessage>; readonly loadError: string | undefined }) {
  const { addToolApprovalResponse, error, messages, sendMessage, status } = useChat({
    id: chatId,
    messages: initial,
    transport: new DefaultChatTransport(),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    resume: true
  })
  const [input, setInput] = useState("")
  const answer = (id: string, approved: boolean) => void addToolApprovalResponse({ id, approved, ...(approved ? {} : { reason: "denied in the page" }) })
  return (
    <main>
      <ol id="messages">
        {messages.map((message) => (
          <li key={message.id} data-role={message.role} data-id={message.id}>
            {message.parts.map((part, i) =>
              part.type === "text" ? <p key={i} className="text">{part.text}</p> : <Tool key={i} part={part} answer={answer} />
            )}
          </li>
        ))}
      </ol>
      <form
        onSubmit={(event) => {
          event.preventDefault()
          void sendMessage({ text: input })
          setInput("")
        }}
      >
        <input id="input" aria-label="Message" value={input} onChange={(event) => setInput(event.target.value)} />
        <button id="send" type="submit">Send</button>
      </form>
      <p id="status">{status}</p>
      {error !== undefined && <p id="error">{error.message}</p>}
      {loadError !== undefined && <p id="load-error">{loadError}</p>}
    </main>
  )
}

// the chat's thread, newest page (a page opened again shows the whole conversation, and answers its pending approvals)
const response = await fetch(`/api/chat/${encodeURIComponent(chatId)}/messages`)
const initial: Array<UIMessage> = response.ok ? (await response.json()).messages : []
const loadError = response.ok ? undefined : await response.text()

createRoot(document.getElementById("root")!).render(<App initial={initial} loadError={loadError} />)
