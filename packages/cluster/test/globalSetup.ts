/** PostgreSQL for this project's tests, once per run: AGENTFX_PG_URL's server, else an embedded one (@agentfx/testing). */
export { setupPostgres as default } from "@agentfx/testing/PostgresSetup"
