import { conformance } from "../../core/test/runStoreConformance.js"
import { freshPg, freshSqlite } from "./fixtures.js"

conformance("SQLite", freshSqlite())
conformance("PostgreSQL", freshPg())
