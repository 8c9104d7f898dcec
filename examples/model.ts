/**
 * Which model the examples talk to, chosen from the environment:
 *
 * - `AGENTFX_BASE_URL` + `AGENTFX_MODEL` (+ `AGENTFX_API_KEY`): a Chat Completions server
 *   (Ollama, vLLM, llama.cpp, LM Studio, …);
 * - else `OPENAI_API_KEY` (+ `OPENAI_MODEL`, `OPENAI_BASE_URL`): OpenAI's Responses API;
 * - else `ANTHROPIC_API_KEY` (+ `ANTHROPIC_MODEL`, `ANTHROPIC_BASE_URL`): Anthropic;
 * - else the example's own script, offline (`ScriptedChatModel`).
 *
 * Empty variables count as unset. The choice is printed first. Each adapter is imported
 * from its own subpath (`@agentfx/ai/OpenAiChatModel`) only when chosen: the offline run
 * does not load the provider SDKs.
 */
import type { ChatModel } from "@agentfx/core"
import { ScriptedChatModel } from "@agentfx/core"
import type { Config } from "effect"
import { Console, Effect, Layer } from "effect"

const env = (name: string): string | undefined => {
  const value = process.env[name]?.trim()
  return value === undefined || value.length === 0 ? undefined : value
}

const lazy = <M, E>(load: () => Promise<M>, make: (module: M) => Layer.Layer<ChatModel.ChatModel, E>) =>
  Layer.unwrap(Effect.map(Effect.promise(load), make))

const announce = <E>(line: string, layer: Layer.Layer<ChatModel.ChatModel, E>) =>
  Layer.merge(layer, Layer.effectDiscard(Console.log(`model: ${line}\n`)))

/**
 * The model an example runs on: a real provider when the environment names one, else
 * `script`, so that every example runs offline. `thinking`: Anthropic's extended thinking,
 * for an example about reasoning.
 */
export const modelFromEnv = (
  script: ScriptedChatModel.Script,
  options?: { readonly thinking?: { readonly budgetTokens: number } }
): Layer.Layer<ChatModel.ChatModel, Config.ConfigError> => {
  const baseUrl = env("AGENTFX_BASE_URL")
  if (baseUrl !== undefined) {
    return announce(
      `Chat Completions at ${baseUrl} (${env("AGENTFX_MODEL") ?? "AGENTFX_MODEL is not set"})`,
      lazy(() => import("@agentfx/ai/ChatCompletionsModel"), (m) => m.layerConfig())
    )
  }
  if (env("OPENAI_API_KEY") !== undefined) {
    return announce(
      `OpenAI Responses API (${env("OPENAI_MODEL") ?? "gpt-4.1-mini"})`,
      lazy(() => import("@agentfx/ai/OpenAiChatModel"), (m) => m.layerConfig())
    )
  }
  if (env("ANTHROPIC_API_KEY") !== undefined) {
    return announce(
      `Anthropic Messages API (${env("ANTHROPIC_MODEL") ?? "claude-sonnet-4-5"})`,
      lazy(() => import("@agentfx/ai/AnthropicChatModel"), (m) => m.layerConfig(options?.thinking === undefined ? {} : { thinking: options.thinking }))
    )
  }
  return announce(
    "scripted, offline (set OPENAI_API_KEY, ANTHROPIC_API_KEY, or AGENTFX_BASE_URL + AGENTFX_MODEL for a real model)",
    ScriptedChatModel.layer(script)
  )
}
