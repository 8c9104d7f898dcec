// @ts-check
/**
 * The inbox page: lists the paused runs, shows one (why it waits, its pending calls, the
 * conversation), checks edited arguments against each tool's JSON Schema and shows how they
 * differ from the model's before anything is sent, posts the decision, shows the server's
 * refusal where it belongs, then what was decided, and follows the resumed run's events — also
 * those of a run someone else decided, when the inbox can follow it (its run's `events`).
 * Plain DOM, no framework, no build step; every control is a native one (keyboard first).
 */
import { check } from "./check.js"
import { diff } from "./diff.js"

/**
 * @typedef {{ callId: string, toolName: string, description: string | null, parameters: unknown, args: unknown, why: string, error?: { reason: string, message: string } }} PendingCall
 * @typedef {{ runId: string, agent: string, conversationId: string, ephemeral: boolean, revision: number, kind: string, pausedAt: number, ageMillis: number, pending: Array<{ callId: string, toolName: string, args: unknown }> }} RunSummary
 * @typedef {Omit<RunSummary, "pending"> & { why: string, pending: Array<PendingCall>, messages: Array<any>, accepts: Array<string>, runner?: string, events?: string }} RunDetail
 * @typedef {{ ok: boolean, status: number, body: any }} Reply
 * @typedef {import("./diff.js").Change} Change
 */

const api = "/inbox/api/runs"
const nameKey = "agentfx-inbox-reviewer"

/** @param {string} id */
const byId = (id) => /** @type {HTMLElement} */ (document.getElementById(id))
const reviewer = /** @type {HTMLInputElement} */ (byId("reviewer"))
const statusLine = byId("status")

/** @type {RunDetail | undefined} */
let current
/** @type {EventSource | undefined} */
let source
/** The run whose events this page follows (decided by it, or by someone else), and its heading's text: the run's outcome is added to it when it comes. @type {{ runId: string, heading: string } | undefined} */
let decided

/**
 * @template {keyof HTMLElementTagNameMap} K
 * @param {K} tag
 * @param {{ [key: string]: string }} [attributes]
 * @param {Array<Node | string>} [children]
 * @returns {HTMLElementTagNameMap[K]}
 */
function h(tag, attributes = {}, children = []) {
  const element = document.createElement(tag)
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, value)
  element.append(...children)
  return element
}

/**
 * @param {string} text
 * @param {"good" | "bad" | ""} [kind]
 */
function setStatus(text, kind = "") {
  statusLine.textContent = text
  statusLine.className = kind
}

/** @param {boolean} json */
function headers(json) {
  /** @type {Record<string, string>} */
  const result = {}
  const name = reviewer.value.trim()
  if (name !== "") result["x-agentfx-reviewer"] = encodeURIComponent(name)
  if (json) result["content-type"] = "application/json"
  return result
}

/**
 * @param {string} url
 * @param {RequestInit} [init]
 * @returns {Promise<Reply>}
 */
async function call(url, init = {}) {
  try {
    const response = await fetch(url, { ...init, headers: { ...headers(init.body !== undefined), ...init.headers } })
    const text = await response.text()
    let body = text
    try {
      body = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { ok: response.ok, status: response.status, body }
  } catch (error) {
    return { ok: false, status: 0, body: { message: `The inbox cannot be reached (${String(error)})` } }
  }
}

/** @param {Reply} reply */
function messageOf(reply) {
  return typeof reply.body === "object" && reply.body !== null && typeof reply.body.message === "string"
    ? reply.body.message
    : `The inbox answered ${reply.status}`
}

/** @param {number} ms */
function age(ms) {
  const s = Math.round(ms / 1000)
  if (s < 5) return "just now"
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.round(s / 60)} min ago`
  if (s < 86400) return `${Math.round(s / 3600)} h ago`
  return `${Math.round(s / 86400)} d ago`
}

async function loadRuns() {
  const reply = await call(api)
  const list = byId("runs")
  if (!reply.ok) {
    setStatus(messageOf(reply), "bad")
    return
  }
  /** @type {Array<RunSummary>} */
  const runs = reply.body
  // the buttons are rebuilt: a keyboard user's focus is put back on the same run's
  const focused = list.contains(document.activeElement) ? document.activeElement?.closest("button")?.getAttribute("data-run-id") : undefined
  list.replaceChildren(...runs.map((run) => {
    const button = h("button", { type: "button", "data-run-id": run.runId }, [
      h("strong", {}, [`${run.agent} · ${run.kind}`]),
      h("br"),
      h("span", { class: "meta" }, [`${run.pending.map((p) => p.toolName).join(", ")} · paused ${age(run.ageMillis)} · ${run.conversationId}`])
    ])
    if (current?.runId === run.runId) button.setAttribute("aria-current", "true")
    button.addEventListener("click", () => void openRun(run.runId))
    return h("li", {}, [button])
  }))
  byId("empty").hidden = runs.length > 0
  if (typeof focused === "string") {
    // the run is gone (decided meanwhile): the first run listed, else the refresh button
    const button = /** @type {HTMLElement} */ (list.querySelector(`button[data-run-id="${CSS.escape(focused)}"]`) ?? list.querySelector("button") ?? byId("refresh"))
    button.focus()
  }
}

/** @param {string} runId */
async function openRun(runId) {
  const reply = await call(`${api}/${encodeURIComponent(runId)}`)
  if (!reply.ok) {
    setStatus(messageOf(reply), "bad")
    void loadRuns()
    return
  }
  current = reply.body
  setStatus("")
  renderRun(reply.body)
  for (const button of document.querySelectorAll("#runs button")) {
    button.setAttribute("aria-current", String(button.getAttribute("data-run-id") === runId))
  }
  byId("run-heading").focus()
}

/** @param {any} message */
function messageLine(message) {
  switch (message._tag) {
    case "User":
      return ["person", message.text]
    case "System":
      return ["system", message.text]
    case "Assistant":
      return ["model", [message.text, ...message.toolCalls.map((/** @type {any} */ c) => `asks ${c.name}(${JSON.stringify(c.args)})`)].filter((t) => t !== "").join(" · ")]
    case "Compaction":
      return ["context", message.summary === undefined ? "the messages above are no longer sent to the model" : `the messages above are sent as a summary: ${message.summary}`]
    default:
      return [`result of ${message.toolName}`, JSON.stringify(message.content)]
  }
}

/**
 * The files of a message: a person's (its parts), a tool's (its result's).
 *
 * @param {any} message
 * @returns {Array<any>}
 */
function filesOf(message) {
  if (message._tag === "User") return (message.parts ?? []).filter((/** @type {any} */ p) => p._tag === "File")
  return message._tag === "ToolResult" ? message.files ?? [] : []
}

/**
 * A file as the conversation shows it: an inline image as the image (the page's policy admits
 * `data:` images only: nothing is fetched from elsewhere), any other file as a line of text.
 *
 * @param {any} file
 */
function fileView(file) {
  const name = file.name ?? file.mediaType
  if (file.source._tag === "Base64" && file.mediaType.startsWith("image/")) {
    return h("img", { class: "file", src: `data:${file.mediaType};base64,${file.source.data}`, alt: name, title: name })
  }
  const data = file.source.data ?? ""
  const where = file.source._tag === "Url" ? file.source.url : `${Math.floor((data.length * 3) / 4) - (data.match(/=*$/)?.[0].length ?? 0)} bytes`
  return h("span", { class: "file" }, [`[${file.name === undefined ? "" : `${file.name}: `}${file.mediaType}, ${where}]`])
}

/**
 * What the run panel says of a run, one fact a line: add a line here to show another.
 *
 * @param {RunDetail} run
 * @param {boolean} waiting whether it still waits for a decision (as far as this page knows)
 * @returns {Array<[string, string]>}
 */
function facts(run, waiting) {
  return [
    [waiting ? "Why it waits" : "Why it waited", run.why],
    ["Run", run.runId],
    ["Conversation", run.conversationId],
    ...(run.runner === undefined ? [] : [/** @type {[string, string]} */ (["Runner", run.runner])]),
    ["Paused", age(run.ageMillis)]
  ]
}

/**
 * @param {RunDetail} run
 * @param {boolean} waiting
 */
function factList(run, waiting) {
  return h("dl", { class: "facts", id: "facts" }, facts(run, waiting).flatMap(([term, value]) => [h("dt", {}, [term]), h("dd", {}, [value])]))
}

/** @param {RunDetail} run */
function renderRun(run) {
  const waiting = `waiting for ${run.kind === "approval" ? "approval" : run.kind}`
  const heading = h("h2", { id: "run-heading", tabindex: "-1" }, [`${run.agent} — ${waiting}`])
  const conversation = h("details", { open: "" }, [
    h("summary", {}, ["Conversation so far"]),
    h("ol", { class: "conversation" }, run.messages.map((m) => {
      const [who, text] = messageLine(m)
      return h("li", {}, [h("span", { class: "who" }, [`${who}: `]), text, ...filesOf(m).map(fileView)])
    }))
  ])
  byId("run").replaceChildren(heading, factList(run, true), conversation, decisionForm(run))
}

/** @param {RunDetail} run */
function decisionForm(run) {
  const form = h("form", { id: "decision", novalidate: "" })
  if (run.kind === "approval") {
    run.pending.forEach((pending, i) => form.append(callFieldset(pending, i)))
    form.append(
      h("p", { class: "error", id: "form-error" }),
      h("div", { class: "actions" }, [
        h("button", { type: "submit", id: "submit", class: "primary" }, ["Submit decision"]),
        actionButton("approve-all", "Approve all as asked", () => ({ _tag: "ApproveAll" })),
        actionButton("reject-all", "Reject all", () => ({ _tag: "RejectAll" }))
      ])
    )
    form.addEventListener("submit", (event) => {
      event.preventDefault()
      void submitByCall(run)
    })
    return form
  }
  // an environment failure (retry, report), or a run out of iterations or budget (continue; a budget's limits raised)
  const raise = h("textarea", { id: "raise", rows: "2", spellcheck: "false", placeholder: `{ "tokens": 50000 }` })
  form.append(
    h("ul", {}, run.pending.map((p) => h("li", {}, [`${p.toolName}(${JSON.stringify(p.args)}): ${p.why}`]))),
    ...(run.kind === "budget" ? [h("label", { for: "raise" }, ["New limits (JSON): a limit left as it was stops the run again at once"]), raise] : []),
    h("p", { class: "error", id: "form-error" }),
    h("div", { class: "actions" }, run.accepts.map((tag) =>
      actionButton(tag.toLowerCase(), tag, () => {
        if (run.kind !== "budget" || raise.value.trim() === "") return { _tag: tag }
        return { _tag: tag, raise: JSON.parse(raise.value) }
      })
    ))
  )
  form.addEventListener("submit", (event) => event.preventDefault())
  return form
}

/**
 * @param {string} id
 * @param {string} label
 * @param {() => unknown} decision
 */
function actionButton(id, label, decision) {
  const button = h("button", { type: "button", id }, [label])
  button.addEventListener("click", () => {
    if (current === undefined) return
    let value
    try {
      value = decision()
    } catch (error) {
      byId("form-error").textContent = `Not JSON: ${error instanceof Error ? error.message : String(error)}`
      return
    }
    void post(current, value)
  })
  return button
}

/**
 * @param {PendingCall} pending
 * @param {number} i
 */
function callFieldset(pending, i) {
  const choice = (/** @type {string} */ value, /** @type {string} */ label) => {
    const input = h("input", { type: "radio", name: `choice-${i}`, value, id: `choice-${i}-${value}` })
    if (value === "approve") input.checked = true
    return h("label", { for: `choice-${i}-${value}` }, [input, ` ${label}`])
  }
  const args = h("textarea", { id: `args-${i}`, "data-args-for": pending.callId, rows: "4", spellcheck: "false", "aria-describedby": `error-${i}` })
  args.value = JSON.stringify(pending.args, null, 2)
  args.rows = Math.min(12, args.value.split("\n").length + 1)
  const changes = h("div", { class: "changes", id: `changes-${i}`, "data-changes-for": pending.callId, "aria-live": "polite", hidden: "" })
  const error = h("p", { class: "error", id: `error-${i}`, "data-error-for": pending.callId })
  const reject = h("input", { id: `reject-${i}`, "data-reject-for": pending.callId, placeholder: "why not (optional)" })
  const reply = h("textarea", { id: `reply-${i}`, "data-reply-for": pending.callId, rows: "2" })
  const parts = {
    approve: h("div", {}, [h("label", { for: `args-${i}` }, ["Arguments (JSON) — edit them to approve with changes"]), args, changes]),
    reject: h("div", { hidden: "" }, [h("label", { for: `reject-${i}` }, ["Reason for the model"]), " ", reject]),
    reply: h("div", { hidden: "" }, [h("label", { for: `reply-${i}` }, ["Answer in its place (JSON, or plain text)"]), reply])
  }
  const fieldset = h("fieldset", { class: "call", "data-call-id": pending.callId, "data-index": String(i) }, [
    h("legend", {}, [`${pending.toolName} · ${pending.callId}`]),
    h("p", { class: "description" }, [pending.description ?? "A sub-agent's tool: the server checks its arguments."]),
    h("p", { class: "why", "data-why-for": pending.callId }, [h("strong", {}, ["Why it waits: "]), pending.why]),
    h("div", { class: "choices", role: "radiogroup", "aria-label": `Decision for ${pending.callId}` }, [
      choice("approve", "Approve"),
      choice("reject", "Reject"),
      choice("reply", "Reply instead")
    ]),
    parts.approve,
    parts.reject,
    parts.reply,
    error
  ])
  fieldset.addEventListener("change", () => {
    const picked = chosen(fieldset)
    parts.approve.hidden = picked !== "approve"
    parts.reject.hidden = picked !== "reject"
    parts.reply.hidden = picked !== "reply"
    showProblems(fieldset, picked === "approve" ? checkArgs(pending, args.value).problems : [])
  })
  args.addEventListener("input", () => {
    const checked = checkArgs(pending, args.value)
    showProblems(fieldset, checked.problems)
    showChanges(changes, "value" in checked ? diff(pending.args, checked.value) : [])
  })
  return fieldset
}

/** @param {unknown} value */
const json = (value) => JSON.stringify(value)

/**
 * The changes as a list: `amount: 250 → 300`, `memo: "Invoice 7" (removed)`, `cc: "Bob" (added)`.
 *
 * @param {Array<Change>} changes
 */
function changeList(changes) {
  return h("ul", { class: "diff" }, changes.map((change) => {
    const what = change.kind === "added"
      ? [h("ins", {}, [json(change.after)]), " (added)"]
      : change.kind === "removed"
      ? [h("del", {}, [json(change.before)]), " (removed)"]
      : [h("del", {}, [json(change.before)]), " → ", h("ins", {}, [json(change.after)])]
    return h("li", { "data-kind": change.kind }, [h("code", {}, [change.path]), ": ", ...what])
  }))
}

/**
 * Shows how the edited arguments differ from the model's, under them; nothing while they
 * are the model's, or not valid.
 *
 * @param {HTMLElement} container
 * @param {Array<Change>} changes
 */
function showChanges(container, changes) {
  container.hidden = changes.length === 0
  container.replaceChildren(...(changes.length === 0 ? [] : [h("p", {}, ["Changed from what the model asked:"]), changeList(changes)]))
}

/** @param {HTMLElement} fieldset */
function chosen(fieldset) {
  return /** @type {HTMLInputElement | null} */ (fieldset.querySelector("input[type=radio]:checked"))?.value ?? "approve"
}

/**
 * The edited arguments, parsed and checked against the tool's JSON Schema.
 *
 * @param {PendingCall} pending
 * @param {string} text
 * @returns {{ value?: unknown, problems: Array<string> }}
 */
function checkArgs(pending, text) {
  let value
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { problems: [`Not JSON: ${error instanceof Error ? error.message : String(error)}`] }
  }
  if (pending.parameters === null) return { value, problems: [] }
  return { value, problems: check(pending.parameters, value) }
}

/**
 * @param {HTMLElement} fieldset
 * @param {Array<string>} problems
 */
function showProblems(fieldset, problems) {
  const i = fieldset.getAttribute("data-index")
  byId(`error-${i}`).textContent = problems.join("\n")
  byId(`args-${i}`).setAttribute("aria-invalid", String(problems.length > 0))
}

/** @param {RunDetail} run */
async function submitByCall(run) {
  /** @type {Record<string, unknown>} */
  const decisions = {}
  /** @type {HTMLElement | undefined} */
  let firstInvalid
  for (const fieldset of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("fieldset.call"))) {
    const i = Number(fieldset.getAttribute("data-index"))
    const pending = run.pending[i]
    const picked = chosen(fieldset)
    if (pending === undefined) continue
    if (picked === "approve") {
      const text = /** @type {HTMLTextAreaElement} */ (byId(`args-${i}`)).value
      const { value, problems } = checkArgs(pending, text)
      showProblems(fieldset, problems)
      if (problems.length > 0) {
        firstInvalid ??= byId(`args-${i}`)
        continue
      }
      decisions[pending.callId] = JSON.stringify(value) === JSON.stringify(pending.args) ? { _tag: "Approve" } : { _tag: "Approve", args: value }
    } else if (picked === "reject") {
      const message = /** @type {HTMLInputElement} */ (byId(`reject-${i}`)).value.trim()
      decisions[pending.callId] = message === "" ? { _tag: "Reject" } : { _tag: "Reject", message }
    } else {
      const text = /** @type {HTMLTextAreaElement} */ (byId(`reply-${i}`)).value
      let value
      try {
        value = JSON.parse(text)
      } catch {
        value = text
      }
      decisions[pending.callId] = { _tag: "Reply", value }
    }
  }
  if (firstInvalid !== undefined) {
    setStatus("Fix the arguments marked in red before deciding.", "bad")
    firstInvalid.focus()
    return
  }
  await post(run, { _tag: "ByCall", decisions })
}

/**
 * @param {RunDetail} run
 * @param {unknown} decision
 */
async function post(run, decision) {
  const form = /** @type {HTMLFormElement} */ (byId("decision"))
  const buttons = /** @type {NodeListOf<HTMLButtonElement>} */ (form.querySelectorAll("button"))
  for (const button of buttons) button.disabled = true
  setStatus("Sending the decision…")
  // the revision shown: a run decided and paused again since is refused, not decided on what this page never showed
  const reply = await call(`${api}/${encodeURIComponent(run.runId)}/decision?revision=${run.revision}`, { method: "POST", body: JSON.stringify(decision) })
  if (reply.ok) {
    setStatus(`Decided by ${reply.body.decidedBy}. Following the run…`, "good")
    form.replaceWith(decisionSummary(run, decision))
    byId("facts").replaceWith(factList(run, false))
    const heading = `${run.agent} — decided by ${reply.body.decidedBy}${at(reply.body.decidedAt)}`
    decided = { runId: run.runId, heading }
    byId("run-heading").textContent = `${heading} · running`
    byId("run-heading").focus()
    follow(reply.body.events)
    void loadRuns()
    return
  }
  const body = reply.body ?? {}
  if (body._tag === "AlreadyDecided") {
    setStatus(`${body.message}${at(body.decidedAt)}`, "bad")
    const by = `${typeof body.decidedBy === "string" ? `decided by ${body.decidedBy}` : "decided by someone else"}${at(body.decidedAt)}`
    markDecided(run, by)
    // the inbox follows runs it did not decide: the decision on the pause this page showed, live
    if (run.events !== undefined) {
      decided = { runId: run.runId, heading: `${run.agent} — ${by}` }
      follow(run.events)
    }
    void loadRuns()
    return
  }
  for (const button of buttons) button.disabled = false
  byId("form-error").textContent = ""
  if (body._tag === "DecisionRefused" && Array.isArray(body.problems)) {
    // the server's own check of edited arguments: shown on each call it names
    for (const problem of body.problems) {
      const fieldset = /** @type {HTMLElement | null} */ (document.querySelector(`fieldset[data-call-id="${CSS.escape(problem.callId)}"]`))
      if (fieldset !== null) showProblems(fieldset, [`Refused by the server: ${problem.message}`])
    }
    const first = /** @type {HTMLElement | null} */ (document.querySelector("textarea[aria-invalid=true]"))
    first?.focus()
  } else {
    byId("form-error").textContent = messageOf(reply)
  }
  setStatus(messageOf(reply), "bad")
}

/** @param {unknown} time epoch milliseconds, when known */
const at = (time) => (typeof time === "number" ? ` (at ${new Date(time).toLocaleTimeString()})` : "")

/**
 * What this page decided, in place of the form: per call, approved as asked or with its
 * changes (against the model's arguments), rejected (why), or answered (with what).
 *
 * @param {RunDetail} run
 * @param {any} decision
 */
function decisionSummary(run, decision) {
  /** @param {PendingCall} pending @returns {Array<Node | string>} */
  const outcome = (pending) => {
    const tag = decision._tag === "ByCall" ? decision.decisions[pending.callId]?._tag : decision._tag
    const mine = decision._tag === "ByCall" ? decision.decisions[pending.callId] : {}
    switch (tag) {
      case "ApproveAll":
      case "Approve": {
        const changes = mine.args === undefined ? [] : diff(pending.args, mine.args)
        return changes.length === 0 ? ["approved as asked"] : ["approved with changes:", changeList(changes)]
      }
      case "RejectAll":
      case "Reject":
        return [typeof mine.message === "string" ? `rejected: ${mine.message}` : "rejected"]
      case "Reply":
        return [`answered in its place: ${json(mine.value)}`]
      case "Retry":
        return ["run again"]
      case "Report":
        return ["its error given to the model"]
      default:
        return [decision.raise === undefined ? "continued" : `continued, the limits raised to ${json(decision.raise)}`]
    }
  }
  return h("div", { id: "decided", class: "decided" }, [
    h("h3", {}, ["What was decided"]),
    run.pending.length === 0
      ? h("p", {}, outcome(/** @type {any} */ ({})))
      : h("ul", {}, run.pending.map((pending) =>
        h("li", { "data-decided-for": pending.callId }, [h("strong", {}, [`${pending.toolName} · ${pending.callId}`]), " — ", ...outcome(pending)])
      ))
  ])
}

/**
 * Someone else decided the run: its panel says so, its controls are disabled for good, and the
 * focus (on a control now disabled) moves to the heading, which is read out.
 *
 * @param {RunDetail} run
 * @param {string} by who decided, and when
 */
function markDecided(run, by) {
  const heading = byId("run-heading")
  heading.textContent = `${run.agent} — ${by}`
  byId("facts").replaceWith(factList(run, false))
  for (const control of /** @type {NodeListOf<HTMLButtonElement | HTMLInputElement | HTMLTextAreaElement>} */ (byId("decision").querySelectorAll("button, input, textarea"))) {
    control.disabled = true
  }
  heading.focus()
}

/**
 * What an event says of its files, after its text: their names and types.
 *
 * @param {Array<any> | undefined} files
 */
function withFiles(files) {
  return files === undefined ? "" : ` + ${files.map((f) => `${f.name ?? "file"} (${f.mediaType})`).join(", ")}`
}

/** @param {any} e */
function eventLine(e) {
  switch (e._tag) {
    case "RunResumed":
      return `resumed: ${e.decision}${e.decidedBy ? ` by ${e.decidedBy}` : ""}`
    case "RunStarted":
      return `started: ${e.input}${withFiles(e.files)}`
    case "ModelCalled":
      return e.purpose === "compaction" ? `model call #${e.iteration}: summarizing earlier messages` : `model call #${e.iteration}`
    case "ModelResponded":
      if (e.purpose === "compaction") return "summary written"
      return e.toolCalls > 0 ? `model asks for ${e.toolCalls} tool call(s)` : `model answered: ${e.text}`
    case "ContextCompacted":
      return `conversation ${e.summarized ? "summarized" : "trimmed"}: about ${e.tokensBefore} → ${e.tokensAfter} tokens`
    case "BatchTruncated":
      return `${e.notRun.length} of ${e.calls} calls not run: a batch runs at most ${e.batchWidth}`
    case "ToolStarted":
      return `→ ${e.toolName}(${JSON.stringify(e.args)})`
    case "ToolSucceeded":
      return `✓ ${e.toolName}: ${JSON.stringify(e.value)}${withFiles(e.files)}`
    case "ToolFailed":
      return `✗ ${e.toolName}: ${e.reason} error: ${e.message}`
    case "ToolTimedOut":
      return `⏱ ${e.toolName} timed out after ${e.timeoutMillis} ms`
    case "RunPaused":
      return `paused again (${e.kind}): ${e.pending.map((/** @type {any} */ p) => p.toolName).join(", ")}`
    case "RunCompleted":
      return `completed: ${e.text}`
    case "RunFailed":
      return `failed (${e.error}): ${e.message}`
    case "EventsLost":
      return `⚠ events lost: ${e.message}`
    default:
      return undefined
  }
}

/**
 * Shows the run's events as they come, to its stop. A dropped connection is reconnected by the
 * browser, with the last event's id (`Last-Event-ID`): the inbox sends what came after it. One
 * that cannot continue after it (another replica of the inbox, which numbers events otherwise)
 * starts over from the decision: what was shown is then replaced, not shown twice.
 *
 * @param {string} url
 */
function follow(url) {
  source?.close()
  const list = byId("events")
  list.replaceChildren()
  const events = new EventSource(url)
  source = events
  /** The run followed (its first event's), and whether the connection was made again since its last event. @type {string | undefined} */
  let runId
  let reconnected = false
  events.onopen = () => {
    reconnected = runId !== undefined
  }
  events.onmessage = (message) => {
    const event = JSON.parse(message.data)
    runId ??= event.runId
    // the run's own decision again (a sub-agent's resume is a step of it): the stream started over
    if (reconnected && event._tag === "RunResumed" && event.runId === runId) list.replaceChildren()
    reconnected = false
    const line = eventLine(event)
    const final = event._tag === "RunCompleted" || event._tag === "RunPaused" || event._tag === "RunFailed"
    if (line !== undefined) list.append(h("li", final ? { class: "final", "data-tag": event._tag } : { "data-tag": event._tag }, [line]))
    if (!final) return
    events.close()
    setStatus(line ?? "", event._tag === "RunCompleted" ? "good" : "bad")
    if (decided !== undefined && decided.runId === event.runId && current?.runId === event.runId) {
      const outcome = event._tag === "RunCompleted" ? "completed" : event._tag === "RunPaused" ? `paused again for ${event.kind}` : "failed"
      byId("run-heading").textContent = `${decided.heading} · ${outcome}`
    }
    void loadRuns()
  }
  events.onerror = () => {
    if (events.readyState === EventSource.CLOSED) setStatus("The run's live events are not available.", "bad")
  }
}

reviewer.value = localStorage.getItem(nameKey) ?? ""
reviewer.addEventListener("change", () => localStorage.setItem(nameKey, reviewer.value.trim()))
byId("refresh").addEventListener("click", () => void loadRuns())
document.addEventListener("keydown", (event) => {
  const target = /** @type {HTMLElement} */ (event.target)
  if (event.key === "r" && !event.ctrlKey && !event.metaKey && !event.altKey && !["INPUT", "TEXTAREA"].includes(target.tagName)) void loadRuns()
})
setInterval(() => void loadRuns(), 15_000)
void loadRuns()
