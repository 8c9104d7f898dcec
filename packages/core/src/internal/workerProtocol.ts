/**
 * One request to a pooled worker and how it ended, seen from the main thread. The other side
 * is `worker-entry.mjs`, which documents the messages.
 */
import * as Effect from "effect/Effect"
import type { Worker } from "node:worker_threads"

/** An error thrown in the worker, as it crosses back. */
export interface WorkerErrorInfo {
  readonly name: string
  readonly message: string
  readonly stack: string
}

export type Request =
  | { readonly kind: "load"; readonly module: string; readonly export: string }
  | {
    readonly kind: "call"
    readonly module: string
    readonly export: string
    readonly args: unknown
    readonly context: unknown
  }

export type Reply =
  | { readonly id: number; readonly kind: "loaded" }
  | { readonly id: number; readonly kind: "load-failed"; readonly error: WorkerErrorInfo }
  | { readonly id: number; readonly kind: "returned"; readonly value: unknown }
  | { readonly id: number; readonly kind: "threw"; readonly error: WorkerErrorInfo }

/** How a request ended. */
export type Outcome =
  | { readonly _tag: "Reply"; readonly reply: Reply }
  | { readonly _tag: "Crashed"; readonly reason: string }
  | { readonly _tag: "Exited"; readonly code: number }
  | { readonly _tag: "Unsendable"; readonly reason: string }

let nextId = 0

/**
 * Sends one request and waits for its reply, the worker's death, or interruption. On
 * interruption it runs `onInterrupt` (the pool terminates the worker there) and waits for it:
 * the interrupter gets control back once the worker is gone — a true kill.
 */
export const request = (worker: Worker, message: Request, onInterrupt: Effect.Effect<void>): Effect.Effect<Outcome> =>
  Effect.callback<Outcome>((resume) => {
    const id = nextId++
    const cleanup = () => {
      worker.off("message", onMessage)
      worker.off("messageerror", onMessageError)
      worker.off("error", onError)
      worker.off("exit", onExit)
    }
    const done = (outcome: Outcome) => {
      cleanup()
      resume(Effect.succeed(outcome))
    }
    const onMessage = (reply: Reply) => {
      if (reply.id === id) done({ _tag: "Reply", reply })
    }
    const onMessageError = (error: unknown) => done({ _tag: "Crashed", reason: `unreadable reply: ${String(error)}` })
    const onError = (error: unknown) =>
      done({ _tag: "Crashed", reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error) })
    const onExit = (code: number) => done({ _tag: "Exited", code })
    worker.on("message", onMessage)
    worker.on("messageerror", onMessageError)
    worker.on("error", onError)
    worker.on("exit", onExit)
    try {
      worker.postMessage({ ...message, id })
    } catch (error) {
      done({ _tag: "Unsendable", reason: String(error) })
    }
    return Effect.suspend(() => {
      cleanup()
      return onInterrupt
    })
  })

export const describeThrown = (error: WorkerErrorInfo): string =>
  error.message === "" ? error.name : `${error.name}: ${error.message}`

export const describeOutcome = (outcome: Outcome): string => {
  switch (outcome._tag) {
    case "Crashed":
      return `crashed (${outcome.reason})`
    case "Exited":
      return `exited with code ${outcome.code} (process.exit in a worker ends the worker)`
    case "Unsendable":
      return `could not be sent the request (${outcome.reason})`
    case "Reply":
      return `replied "${outcome.reply.kind}" out of turn`
  }
}
