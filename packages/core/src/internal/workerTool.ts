/**
 * What makes a tool worker-isolated: its options normalised, its handler (encode → pool →
 * decode), its checks at assembly, and the reservation the executor puts around an attempt.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { statSync } from "node:fs"
import { isAbsolute } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { CallContext, Isolation } from "../Tool.js"
import { semantic, type ToolError } from "../ToolError.js"
import { WorkerPool } from "../WorkerPool.js"
import { describeParseError, invalidResult } from "./parseError.js"

interface IsolationOptions {
  readonly isolation?: unknown
  readonly module?: unknown
  readonly export?: unknown
  readonly handler?: unknown
}

const normaliseModule = (module: unknown): string | undefined => {
  if (module instanceof URL) return module.href
  if (typeof module !== "string" || module === "") return undefined
  return isAbsolute(module) ? pathToFileURL(module).href : module
}

/** Reads `isolation`, `module`, `export` and `handler` from `Tool.make`'s options; never throws. */
export const isolationOf = (options: IsolationOptions): Isolation => {
  const { isolation } = options
  if (isolation === undefined || isolation === "in-process") {
    if (options.module !== undefined || options.export !== undefined) {
      return { _tag: "Invalid", problem: `"module" and "export" are only read with isolation: "worker"` }
    }
    return typeof options.handler === "function"
      ? { _tag: "InProcess" }
      : { _tag: "Invalid", problem: "an in-process tool needs a handler function" }
  }
  if (isolation !== "worker") {
    return { _tag: "Invalid", problem: `isolation ${JSON.stringify(isolation)} is not "in-process" or "worker"` }
  }
  if (options.handler !== undefined) {
    return { _tag: "Invalid", problem: `a tool with isolation: "worker" takes a module, not a handler` }
  }
  const module = normaliseModule(options.module)
  if (module === undefined) {
    return { _tag: "Invalid", problem: `isolation: "worker" needs a module (a file: URL of the module that exports the function)` }
  }
  const exportName = options.export ?? "default"
  if (typeof exportName !== "string" || exportName === "") {
    return { _tag: "Invalid", problem: `export ${JSON.stringify(exportName)} is not a non-empty string` }
  }
  return { _tag: "Worker", module, export: exportName }
}

/** Assembly checks of a worker tool's module: a `file:` URL of an existing file. */
export const checkIsolation = (isolation: Isolation): ReadonlyArray<string> => {
  if (isolation._tag === "Invalid") return [isolation.problem]
  if (isolation._tag === "InProcess") return []
  let path: string
  try {
    const url = new URL(isolation.module)
    if (url.protocol !== "file:") throw new Error()
    path = fileURLToPath(url)
  } catch {
    return [
      `module ${JSON.stringify(isolation.module)} is not a file: URL or an absolute path (use new URL("./x.worker.ts", import.meta.url))`
    ]
  }
  try {
    if (!statSync(path).isFile()) return [`module ${path} is not a file`]
  } catch {
    return [`module ${path} does not exist`]
  }
  return []
}

/**
 * The handler of a worker tool: encode the decoded arguments again (the worker gets plain
 * data), run the export in the pool, decode its reply with `success`.
 */
export const workerHandler = <Params, ParamsEncoded, Success, SuccessEncoded>(
  parameters: Schema.Codec<Params, ParamsEncoded>,
  success: Schema.Codec<Success, SuccessEncoded>,
  isolation: Isolation
) => {
  const encodeArgs = Schema.encodeEffect(parameters, { reportInput: true })
  const decodeResult = Schema.decodeUnknownEffect(success, { errors: "all", reportInput: true })
  return (args: Params, context: CallContext): Effect.Effect<Success, ToolError, WorkerPool> =>
    Effect.gen(function*() {
      if (isolation._tag !== "Worker") {
        return yield* Effect.die(new Error(`Tool "${context.toolName}" is not a valid worker tool`))
      }
      const encoded = yield* Effect.mapError(
        encodeArgs(args),
        (error) => semantic(`Tool "${context.toolName}" cannot encode its arguments: ${describeParseError(error)}`)
      )
      const pool = yield* WorkerPool
      const reply = yield* pool.run({
        module: isolation.module,
        export: isolation.export,
        toolName: context.toolName,
        args: encoded,
        context: { callId: context.callId, toolName: context.toolName, attempt: context.attempt }
      })
      return yield* Effect.mapError(
        decodeResult(reply),
        (error) => invalidResult(context.toolName, error)
      )
    })
}

/**
 * Wraps one attempt (its timeout included) of a worker tool in a reservation: the wait for a
 * worker, its spawn and the module's import happen before the deadline starts. In-process
 * tools are left as they are.
 */
export const reserveWorker = (isolation: Isolation, toolName: string) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | ToolError, R | WorkerPool> =>
  isolation._tag === "Worker"
    ? Effect.flatMap(
      WorkerPool,
      (pool) => pool.reserve({ module: isolation.module, export: isolation.export, toolName })(self)
    )
    : self
