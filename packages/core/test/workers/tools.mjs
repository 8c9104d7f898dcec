// Worker functions for WorkerPool.test.ts: plain JavaScript, loaded without tsx.
import { threadId } from "node:worker_threads"

/** Answers with its input and the thread it ran on. */
export const echo = ({ text }) => ({ text, threadId })

/** A synchronous loop that never yields: only terminating the worker stops it. */
export const spin = () => {
  while (true) {
    // never yields
  }
}

/** Burns CPU for `millis`, then reports when it ran (epoch ms, comparable across threads). */
export const busy = ({ millis }) => {
  const start = Date.now()
  while (Date.now() - start < millis) {
    // synchronous work
  }
  return { start, end: Date.now() }
}

/** Spins on its first attempt, answers on the next: how a retry of a killed call looks. */
export const flaky = (_args, { attempt }) => {
  if (attempt === 1) spin()
  return `attempt ${attempt}`
}

export const throws = () => {
  throw new RangeError("boom")
}

export const rejects = async () => {
  throw new Error("async boom")
}

export const exits = () => process.exit(3)

/** Throws outside the call's promise: an uncaught exception that kills the worker. */
export const crashesLater = () =>
  new Promise(() => {
    setTimeout(() => {
      throw new Error("uncaught in a timer")
    }, 1)
  })

/** Answers, then throws in a timer while the worker is idle. */
export const timeBomb = () => {
  setTimeout(() => {
    throw new Error("after the call")
  }, 20)
  return "ok"
}

export const unsendable = () => () => "a function cannot be cloned"

export const wrongShape = () => ({ unexpected: true })

export const notAFunction = 42

export default ({ text }) => text.toUpperCase()
