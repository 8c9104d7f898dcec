import * as SqlClient from "effect/sql/SqlClient"
import { Effect } from "effect"
import { conformance } from "../../core/test/runStoreConformance.js"
import { elapse, freshPg, freshSqlite } from "./fixtures.js"

/** The database's clock cannot be moved: what the store wrote moves into the past. */
const databaseElapse = (millis: number) => Effect.flatMap(SqlClient.SqlClient, (sql) => elapse(sql, millis))

conformance("SQLite", freshSqlite(), databaseElapse)
conformance("PostgreSQL", freshPg(), databaseElapse)
