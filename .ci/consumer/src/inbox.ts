/**
 * `@agentfx/inbox` under plain `node`: the inbox served on a free port of 127.0.0.1 over the
 * SQLite store, with a run paused for approval; the page, the assets it links (and the module
 * its script imports) and the runs API are fetched, and the assets compared with the files of
 * the installed package's `static/`. Then the server stops. Prints what `run.sh` expects.
 */
import { Agent, ScriptedChatModel } from "@agentfx/core"
import { Inbox } from "@agentfx/inbox"
import { HttpServer } from "@effect/platform"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative } from "node:path"
import { payments, script } from "./payments.js"
import { TempStore } from "./tempStore.js"

const installed = join(dirname(createRequire(import.meta.url).resolve("@agentfx/inbox/package.json")), "static")

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
  })

const program = Effect.gen(function*() {
  const paused = yield* Agent.run(payments, { input: "Pay ada 500." })
  const server = yield* HttpServer.HttpServer
  if (server.address._tag !== "TcpAddress") return yield* Effect.dieMessage("the inbox is not on TCP")
  const origin = `http://127.0.0.1:${server.address.port}`
  const page = yield* get(`${origin}/inbox`)
  yield* Console.log(`GET /inbox: ${page.status} ${page.type}`)
  const linked = [...page.body.matchAll(/(?:href|src)="\/inbox\/assets\/([\w.-]+)"/g)].map((m) => m[1]!)
  const script = readFileSync(join(installed, "inbox.js"), "utf8")
  const imported = [...script.matchAll(/from "\.\/([\w.-]+)"/g)].map((m) => m[1]!)
  for (const file of [...linked, ...imported]) {
    const asset = yield* get(`${origin}/inbox/assets/${file}`)
    const same = asset.body === readFileSync(join(installed, file), "utf8")
    yield* Console.log(`GET /inbox/assets/${file}: ${asset.status}, ${same ? "the file" : "NOT the file"} of ${relative(process.cwd(), installed)}`)
  }
  const runs = yield* get(`${origin}/inbox/api/runs`)
  const listed: Array<{ runId: string; agent: string; pending: Array<{ toolName: string; args: unknown }> }> = JSON.parse(runs.body)
  yield* Console.log(`GET /inbox/api/runs: ${runs.status}, ${listed.length} run(s): ${
    listed.map((r) => `${r.runId === paused.runId ? "the paused run" : r.runId} of ${r.agent}, ${r.pending.map((p) => `${p.toolName} ${JSON.stringify(p.args)}`).join(", ")}`).join("; ")
  }`)
  yield* Console.log("stopping the inbox")
})

program.pipe(
  Effect.provide(Inbox.serve({ agents: [payments], port: 0 })),
  Effect.provide(ScriptedChatModel.layer(script)),
  Effect.provide(TempStore("inbox")),
  NodeRuntime.runMain
)
