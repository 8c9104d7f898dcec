/**
 * The store on any `SqlClient`. The Layers that bring a driver's client are imported from
 * their own entry points, so that only that driver need be installed:
 * `@agentfx/sql/SqliteStore` (`@effect/sql-sqlite-node`) and `@agentfx/sql/PgStore`
 * (`@effect/sql-pg`).
 *
 * @since 0.1.0
 */
export * as SqlChatMemory from "./SqlChatMemory.js"
export * as SqlRunStore from "./SqlRunStore.js"
export * as SqlStore from "./SqlStore.js"
