// A worker module written in TypeScript: loaded in the worker through tsx's ESM hooks.
// Type-only imports cost nothing at run time; the worker never loads `effect`.
import type { CallContext } from "../../src/Tool.js"

interface Args {
  readonly n: number
}

export default ({ n }: Args, context: CallContext): { readonly sum: number; readonly callId: string } => {
  let sum = 0
  for (let i = 0; i < n; i++) sum += i
  return { sum, callId: context.callId }
}
