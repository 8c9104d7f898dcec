/**
 * Where a tool keeps its work. Not re-exported: a tool runs through the executor only, so
 * that its arguments are decoded and its timeout and retries apply on every path.
 */
export const HandlerKey: unique symbol = Symbol.for("@agentfx/core/Tool/handler")
