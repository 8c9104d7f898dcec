/**
 * @since 0.1.0
 */
export * as Authorization from "./Authorization.js"
export * as DecisionLog from "./DecisionLog.js"
export * as Inbox from "./Inbox.js"
export * as InboxApi from "./InboxApi.js"
export * as LiveEvent from "./LiveEvent.js"
export * as RunDriver from "./RunDriver.js"
