/**
 * @since 0.1.0
 */
export * as AgUi from "./AgUi.js"
export * as AgUiApi from "./AgUiApi.js"
export * as AgUiEvent from "./AgUiEvent.js"
export * as AgUiMessage from "./AgUiMessage.js"
export * as Chat from "./Chat.js"
export * as ChatApi from "./ChatApi.js"
export * as ChatAuthorization from "./ChatAuthorization.js"
export * as ChatDriver from "./ChatDriver.js"
export * as UiChunk from "./UiChunk.js"
export * as UiMessage from "./UiMessage.js"
