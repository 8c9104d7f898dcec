/**
 * `@agentfx/inbox` under plain `node`: the inbox served on a free port of 127.0.0.1 over the
 * SQLite store, with a run paused for approval (the address it logs is printed, its port as
 * PORT); the page, the assets it links (and the modules its scripts import), the module of
 * `@cfworker/json-schema` its import map names, and the runs API are fetched, and the assets
 * compared with the files of the installed packages. Then the server stops. Prints what
 * `run.sh` expects.
 */
import { Agent, ScriptedChatModel } from "@agentfx/core"
import { Inbox } from "@agentfx/inbox"
import { HttpServer } from "effect/http"
import { NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join, relative } from "node:path"
import { payments, script } from "./payments.js"
import { PrintedLogs } from "./printedLogs.js"
import { TempStore } from "./tempStore.js"

const inboxPackage = createRequire(import.meta.url).resolve("@agentfx/inbox/package.json")
const installed = join(dirname(inboxPackage), "static")
const library = join(dirname(createRequire(inboxPackage).resolve("@cfworker/json-schema/package.json")), "dist", "esm")

const get = (url: string) =>
  Effect.promise(async () => {
    const response = await fetch(url)
    return { status: response.status, type: response.headers.get("content-type"), body: await response.text() }
  })

const program = Effect.gen(function*() {
  const paused = yield* Agent.run(payments, { input: "Pay ada 500." })
  const server = yield* HttpServer.HttpServer
  if (server.address._tag === "UnixPathAddress") return yield* Effect.die(new Error("the inbox is not on TCP"))
  const origin = `http://127.0.0.1:${server.address.port}`
  const page = yield* get(`${origin}/inbox`)
  yield* Console.log(`GET /inbox: ${page.status} ${page.type}`)
  const files = [...page.body.matchAll(/(?:href|src)="\/inbox\/assets\/([\w.-]+)"/g)].map((m) => m[1]!)
  // the modules the page's scripts import, theirs too
  for (const file of files) {
    if (!file.endsWith(".js")) continue
    for (const [, imported] of readFileSync(join(installed, file), "utf8").matchAll(/from "\.\/([\w.-]+)"/g)) {
      if (!files.includes(imported!)) files.push(imported!)
    }
  }
  for (const file of files) {
    const asset = yield* get(`${origin}/inbox/assets/${file}`)
    const same = asset.body === readFileSync(join(installed, file), "utf8")
    yield* Console.log(`GET /inbox/assets/${file}: ${asset.status}, ${same ? "the file" : "NOT the file"} of ${relative(process.cwd(), installed)}`)
  }
  const mapped = /"@cfworker\/json-schema": "\/inbox\/assets\/json-schema\/([\w.-]+)"/.exec(page.body)?.[1] ?? "(not in the import map)"
  const module = yield* get(`${origin}/inbox/assets/json-schema/${mapped}`)
  const same = module.status === 200 && module.body === readFileSync(join(library, mapped), "utf8")
  yield* Console.log(`GET /inbox/assets/json-schema/${mapped}: ${module.status}, ${same ? "the file" : "NOT the file"} of ${relative(process.cwd(), library)}`)
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
  Effect.provide(PrintedLogs),
  NodeRuntime.runMain
)
