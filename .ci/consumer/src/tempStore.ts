/**
 * The payments store in a SQLite file of a temporary folder, removed when the Layer is
 * released: for the programs that serve it (inbox.ts, chat.ts). Apart from payments.ts, which
 * is type-checked without Node's types.
 */
import { Effect, Layer } from "effect"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { StoreLive } from "./payments.js"

export const TempStore = (name: string) =>
  Layer.unwrap(Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), `agentfx-consumer-${name}-`))),
      (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
    ),
    (dir) => StoreLive(join(dir, `${name}.db`))
  ))
