import { Effect, Schema } from "effect"
import { Tool, type ToolCall } from "../src/index.js"

/** Counts how many handlers run at once and the highest count seen. */
export class ConcurrencyProbe {
  current = 0
  max = 0
  started = 0
  finished = 0
  readonly track = <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        this.started += 1
        this.current += 1
        this.max = Math.max(this.max, this.current)
      }),
      () => self,
      (_, exit) =>
        Effect.sync(() => {
          this.current -= 1
          if (exit._tag === "Success") this.finished += 1
        })
    )
}

/** A tool that sleeps for `millis` (virtual time under TestClock) and answers with its label. */
export const sleeper = (name: string, options: {
  readonly millis: number
  readonly timeout?: Tool.Options<unknown, unknown, unknown, unknown, never>["timeout"]
  readonly serial?: boolean
  readonly probe?: ConcurrencyProbe
}) =>
  Tool.make(name, {
    description: `Sleeps ${options.millis} ms`,
    parameters: Schema.Struct({ label: Schema.String }),
    success: Schema.String,
    ...(options.timeout !== undefined ? { timeout: options.timeout } : {}),
    ...(options.serial !== undefined ? { serial: options.serial } : {}),
    handler: ({ label }) => {
      const work = Effect.sleep(options.millis).pipe(Effect.as(`${name}:${label}`))
      return options.probe ? options.probe.track(work) : work
    }
  })

/** `n` calls of one tool, labelled 0..n-1. */
export const callsOf = (name: string, n: number): Array<ToolCall.ToolCall> =>
  Array.from({ length: n }, (_, i) => ({ id: `call_${i}`, name, args: { label: String(i) } }))

/** Compact view of results: the value, or the failure's tag and message. */
export const summary = (results: ReadonlyArray<ToolCall.Result>) =>
  results.map((r) =>
    r._tag === "Succeeded" ? r.value : r._tag === "Failed" ? `${r.error._tag}(${r.error.reason}): ${r.error.message}` : r._tag
  )
