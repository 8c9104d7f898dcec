// @agentfx/sql with only the PostgreSQL driver installed (README.md's line for it): the
// package's root and @agentfx/sql/PgStore load under plain `node`, and the store Layer on a
// server that does not answer fails with the store's typed error. Prints what run.sh expects.
import { SqlStore } from "@agentfx/sql"
import * as PgStore from "@agentfx/sql/PgStore"
import { Effect, Layer, Redacted } from "effect"

const sqlite = await import("@effect/sql-sqlite-node").then(() => "installed", (e) => e.code)
console.log(`@effect/sql-sqlite-node: ${sqlite}`)
console.log(`SqlStore.layer: ${typeof SqlStore.layer}, PgStore.layer: ${typeof PgStore.layer}`)
const error = await Effect.runPromise(
  Layer.build(PgStore.layer({ url: Redacted.make("postgres://nobody@127.0.0.1:1/none") })).pipe(Effect.scoped, Effect.flip)
)
console.log(`${error._tag}: ${error.message}`)
