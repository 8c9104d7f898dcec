/** PostgreSQL for this project's tests, once per run: AGENTFX_PG_URL's server, else an embedded one (@agentfx/testing, from its sources: `pnpm test` needs no build). */
export { setupPostgres as default } from "../../testing/src/PostgresSetup.js"
