/**
 * @since 0.1.0
 */
export * as AiChatModel from "./AiChatModel.js"
export * as AiToolkit from "./AiToolkit.js"
export * as AnthropicChatModel from "./AnthropicChatModel.js"
export * as ChatCompletionsModel from "./ChatCompletionsModel.js"
export * as ModelRetry from "./ModelRetry.js"
export * as ModelTimeout from "./ModelTimeout.js"
export * as OpenAiChatModel from "./OpenAiChatModel.js"
