/**
 * The SQL statements an effect sends, read from the client spans `effect/sql` opens: one per
 * statement (its `db.query.text`, whitespace collapsed) and one per transaction control (its
 * `db.operation.name`: `BEGIN`, `COMMIT`, `ROLLBACK`), in the order they were sent, across the
 * effect's fibers and their children. For tests that pin round trips.
 */
import { Effect, Tracer } from "effect"

/** `effect`'s value, and the statements it sent. */
export const statementsOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.tracer, (base) => {
    const statements: Array<string> = []
    const tracer = Tracer.make({
      ...(base.context === undefined ? {} : { context: base.context }),
      span: (options) => {
        const span = base.span(options)
        const attribute = span.attribute.bind(span)
        return Object.assign(span, {
          attribute: (key: string, value: unknown) => {
            if (key === "db.query.text") statements.push(String(value).replace(/\s+/g, " ").trim())
            if (key === "db.operation.name") statements.push(String(value))
            attribute(key, value)
          }
        })
      }
    })
    return Effect.map(Effect.withTracer(effect, tracer), (value) => ({ value, statements: statements as ReadonlyArray<string> }))
  })
