/**
 * The figures and checks of a bench program that prints a table (`bench:store`,
 * `bench:cluster`): rows and checks collected as it runs, then the table, the failed checks and
 * the exit code — non-zero when a check failed or the program did, never because of a time.
 */
import { Effect } from "effect"
import type { Check } from "./measure.js"

/** A program's rows (figure, value) and checks, and how it ends. */
export const make = () => {
  const checks: Array<Check> = []
  const rows: Array<readonly [string, string]> = []
  const check = (name: string, ok: boolean, detail: string) => void checks.push({ name, ok, detail })
  /** Runs `program`, then prints the table titled `title`, the failed checks, and exits. */
  const finish = <E>(program: Effect.Effect<void, E>, title: string) =>
    Effect.runPromise(program).then(
      () => {
        const failed = checks.filter((c) => !c.ok)
        process.stdout.write(`| ${title} | |\n|---|---|\n${rows.map(([k, v]) => `| ${k} | ${v} |`).join("\n")}\n`)
        for (const c of failed) process.stdout.write(`FAILED: ${c.name} — ${c.detail}\n`)
        process.stdout.write(`${checks.length - failed.length}/${checks.length} checks passed\n`)
        process.exit(failed.length === 0 ? 0 : 1)
      },
      (error) => {
        console.error(error)
        process.exit(1)
      }
    )
  return { checks, rows, check, finish }
}
