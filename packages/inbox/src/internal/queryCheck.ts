/**
 * The `QueryCheck` middleware: a query that an endpoint's Schema refuses is `InvalidQuery`,
 * naming each parameter and what is wrong (not the value: the page's is a token); every other
 * schema error is left to the API (a response that cannot be encoded is a reported 500).
 */
import { Effect, SchemaIssue } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { InvalidQuery, QueryCheck } from "../InboxApi.js"

const issuesOf = SchemaIssue.makeFormatterStandardSchemaV1()

export const layer = HttpApiMiddleware.layerSchemaErrorTransform(QueryCheck, (error) => {
  if (error.kind !== "Query") return Effect.fail(error)
  const problems = issuesOf(error.cause.issue).issues.map(({ message, path }) =>
    `${(path ?? []).map((key) => String(typeof key === "object" ? key.key : key)).join(".")}: ${message}`)
  return Effect.fail(new InvalidQuery({ message: `The query is not valid: ${problems.join("; ")}` }))
})
