/**
 * A worker module written in TypeScript (loaded in the worker through tsx; compiled, it is
 * plain JavaScript). It imports only types: a worker never loads `effect` (120–400 ms).
 */
import type { CrunchParams, CrunchResult } from "../worker-tools.js"

/** The `crunch` tool: synchronous CPU work on the encoded arguments, returning the encoded result. */
export default ({ n }: typeof CrunchParams.Encoded): typeof CrunchResult.Encoded => {
  let sum = 0
  for (let i = 0; i < n; i++) sum += i % 7
  return { sum }
}

/** Never returns: only terminating the worker stops it. */
export const spin = (): never => {
  while (true) {
    // a synchronous loop that never yields
  }
}

/** Answers with its input: the cost of a round trip. */
export const echo = (args: { readonly text: string }) => args
