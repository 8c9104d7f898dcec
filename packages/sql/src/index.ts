/**
 * @since 0.1.0
 */
export * as SqlChatMemory from "./SqlChatMemory.js"
export * as SqlRunStore from "./SqlRunStore.js"
export * as SqlStore from "./SqlStore.js"
