/**
 * @since 0.1.0
 */
export * as Json from "./Json.js"
export * as Tool from "./Tool.js"
export * as ToolCall from "./ToolCall.js"
export * as ToolCallingManager from "./ToolCallingManager.js"
export * as ToolError from "./ToolError.js"
export * as Toolkit from "./Toolkit.js"
export * as WorkerPool from "./WorkerPool.js"
