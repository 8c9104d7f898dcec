import { describe, it } from "@effect/vitest"
import { conformance } from "../../core/test/runStoreConformance.js"
import { freshPg, freshSqlite, pgSkipped, pgUrl } from "./fixtures.js"

conformance("SQLite", freshSqlite())

if (pgUrl !== undefined) conformance("PostgreSQL", freshPg())
else describe("RunStore conformance: PostgreSQL", () => it.skip(pgSkipped, () => {}))
