/**
 * PostgreSQL for a vitest project: its `globalSetup` picks the server once per run (the one
 * `AGENTFX_PG_URL` names, else an embedded one it starts and stops) and gives every test file
 * of the project its URL (`provide`; test files read it with `postgresUrl`). A global setup
 * runs in vitest's main process, where `vitest` itself must not be imported: this module
 * imports only its types.
 */
import type { TestProject } from "vitest/node"
import { type Postgres, startPostgres } from "./Postgres.js"

declare module "vitest" {
  export interface ProvidedContext {
    readonly agentfxPostgresUrl: string
  }
}

/**
 * The embedded server of this vitest process and how many projects use it: each project loads
 * its own copy of this module, so the count lives on the process.
 */
interface Shared {
  readonly server: Promise<Postgres>
  users: number
}
const key = Symbol.for("@agentfx/testing/PostgresSetup")
const processWide = globalThis as { [key]?: Shared }

/**
 * A vitest `globalSetup`: with `AGENTFX_PG_URL` set, that server's URL (nothing is started);
 * otherwise a server of `startPostgres` — one per run, however many projects name this setup —
 * stopped when the last of them tears down, whether its tests passed or not. Export it as the
 * default of a project's setup file.
 *
 * @example
 * ```ts
 * // test/globalSetup.ts, named by the project's vitest.config.ts: `globalSetup: ["test/globalSetup.ts"]`
 * export { setupPostgres as default } from "@agentfx/testing/PostgresSetup"
 * ```
 *
 * @since 0.0.0
 * @category vitest
 */
export const setupPostgres = async (project: TestProject): Promise<() => Promise<void>> => {
  const external = process.env.AGENTFX_PG_URL
  if (external !== undefined && external !== "") {
    project.provide("agentfxPostgresUrl", external)
    return async () => {}
  }
  const shared = (processWide[key] ??= {
    server: startPostgres().then((server) => {
      process.stderr.write(`PostgreSQL for the tests: embedded, ${server.url} (AGENTFX_PG_URL picks another)\n`)
      return server
    }),
    users: 0
  })
  shared.users++
  const server = await shared.server
  project.provide("agentfxPostgresUrl", server.url)
  let tornDown = false
  return async () => {
    if (tornDown) return
    tornDown = true
    if (--shared.users > 0) return
    delete processWide[key]
    await server.stop()
  }
}
