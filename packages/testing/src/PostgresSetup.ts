/**
 * PostgreSQL for a vitest project: its `globalSetup` picks the server once per run (the one
 * `AGENTFX_PG_URL` names, else an embedded one it starts and stops) and gives every test file
 * of the project its URL (`provide`; test files read it with `postgresUrl`). A global setup
 * runs in vitest's main process, where `vitest` itself must not be imported: this module
 * imports only its types.
 */
import type { TestProject } from "vitest/node"
import { startPostgres } from "./Postgres.js"

declare module "vitest" {
  export interface ProvidedContext {
    readonly agentfxPostgresUrl: string
  }
}

/**
 * A vitest `globalSetup`: with `AGENTFX_PG_URL` set, that server's URL (nothing is started);
 * otherwise a server of `startPostgres`, stopped when the run ends — whether its tests passed
 * or not. Export it as the default of a project's setup file.
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
  const server = await startPostgres()
  process.stderr.write(`PostgreSQL for the tests of ${project.name}: embedded, ${server.url} (AGENTFX_PG_URL picks another)\n`)
  project.provide("agentfxPostgresUrl", server.url)
  return server.stop
}
