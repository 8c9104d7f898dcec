/**
 * Config helpers shared by the adapters' `layerConfig`.
 */
import type { Redacted } from "effect"
import { Config, Effect, Option } from "effect"

/** An optional string setting; a blank value (`OPENAI_MODEL=` in a .env file) counts as unset. */
export const optionalString = (name: string): Config.Config<Option.Option<string>> =>
  Config.map(Config.option(Config.string(name)), Option.filter((value) => value.trim().length > 0))

/** A string setting with a default for when it is unset or blank. */
export const stringWithDefault = (name: string, fallback: string): Config.Config<string> =>
  Config.map(optionalString(name), Option.getOrElse(() => fallback))

/** Where a hosted provider's settings come from: given `Config`s, else `<PREFIX>_API_KEY`, `<PREFIX>_MODEL`, `<PREFIX>_BASE_URL`. */
export interface ProviderConfig {
  readonly apiKey?: Config.Config<Redacted.Redacted>
  readonly model?: Config.Config<string>
  readonly apiUrl?: Config.Config<Option.Option<string>>
}

/** Reads a hosted provider's API key (required), model (default `defaultModel`) and base URL (optional). */
export const readProviderConfig = (prefix: string, defaultModel: string, options: ProviderConfig | undefined) =>
  Effect.gen(function*() {
    const apiKey = yield* (options?.apiKey ?? Config.redacted(`${prefix}_API_KEY`))
    const model = yield* (options?.model ?? stringWithDefault(`${prefix}_MODEL`, defaultModel))
    const apiUrl = yield* (options?.apiUrl ?? optionalString(`${prefix}_BASE_URL`))
    return { apiKey, model, apiUrl: Option.getOrUndefined(apiUrl) }
  })
