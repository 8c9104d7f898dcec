/**
 * One cold start, in a fresh process: `node cold.js <floor|agentfx|effect>`. Prints one JSON
 * line: `importMs` (the dynamic import of what the mode needs), `completedMs` (from the
 * process's time origin until the first run's answer: node's own start, the import and the
 * run). `agentfx`: `@agentfx/core` and `effect/Effect`, then one `Agent.run` on the scripted
 * model answering with text, until its `Completed`. `floor`: nothing to import; the
 * hand-written loop's one model call. `effect`: `effect/Effect` and `effect/Schema` alone —
 * what agentfx's effects and data need before agentfx loads a module (reference), no run.
 */
const mode = process.argv[2]
const start = performance.now()

const completed = async (): Promise<string> => {
  if (mode === "agentfx") {
    const [{ Agent, ScriptedChatModel }, Effect] = await Promise.all([import("@agentfx/core"), import("effect/Effect")])
    imported = performance.now()
    const exit = await Effect.runPromise(
      Agent.run(Agent.make({ tools: [] }), { input: "go" }).pipe(Effect.provide(ScriptedChatModel.layer(() => ({ text: "done" }))))
    )
    return exit._tag === "Completed" ? exit.text : exit._tag
  }
  if (mode === "effect") {
    await Promise.all([import("effect/Effect"), import("effect/Schema")])
    imported = performance.now()
    return "done"
  }
  imported = performance.now()
  const messages: Array<{ readonly role: string; readonly content: string }> = [{ role: "user", content: "go" }]
  const model = async (history: ReadonlyArray<{ readonly content: string }>) => ({ text: history.length > 0 ? "done" : "" })
  const reply = await model(messages)
  messages.push({ role: "assistant", content: reply.text })
  return reply.text
}

let imported = start
const text = await completed()
const completedMs = performance.now()
process.stdout.write(`${JSON.stringify({ importMs: imported - start, completedMs, text })}\n`)
