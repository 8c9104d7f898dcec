/**
 * What agentfx's own tests need from outside, from npm alone (private, never published). For
 * test files; a vitest global setup imports `@agentfx/testing/PostgresSetup` and a program
 * `@agentfx/testing/Postgres` instead, since this entry point loads `vitest`.
 */
export { launchChromium } from "./Chromium.js"
export { type Postgres, startPostgres } from "./Postgres.js"
export { postgresUrl } from "./PostgresUrl.js"
export { type Key, openTerminal, type Terminal, type TerminalOptions } from "./Terminal.js"
export { type Child, ChildError, freePort, spawn, type SpawnOptions } from "./Process.js"
