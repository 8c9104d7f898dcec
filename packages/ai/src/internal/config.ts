/**
 * Config helpers shared by the adapters' `layerConfig`. A blank value (`OPENAI_API_KEY=` in
 * a .env file) counts as unset everywhere: a required setting that is blank is missing.
 */
import { Config, Effect, Option, Redacted, Schema } from "effect"

const isBlank = (value: string) => value.trim().length === 0

/** An optional string setting; blank counts as unset. */
export const optionalString = (name: string): Config.Config<Option.Option<string>> =>
  Config.map(Config.option(Config.String(name)), Option.filter((value: string) => !isBlank(value)))

/** A required string setting; blank is a `ConfigError` naming it, as if it were missing. */
export const requiredString = (name: string): Config.Config<string> =>
  Config.schema(
    Schema.String.check(Schema.makeFilter((value: string) =>
      !isBlank(value) || `Expected ${name} to be set, but it is blank (a blank value counts as unset)`
    )),
    name
  )

/** A string setting with a default for when it is unset or blank. */
export const stringWithDefault = (name: string, fallback: string): Config.Config<string> =>
  Config.map(optionalString(name), Option.getOrElse(() => fallback))

/**
 * Where a hosted provider's settings come from: given `Config`s, else `<PREFIX>_API_KEY`,
 * `<PREFIX>_MODEL`, `<PREFIX>_BASE_URL`. A given `baseUrl` means what the adapter's option means
 * (up to and including the API's version path); `<PREFIX>_BASE_URL` means what the provider's own
 * SDK reads it as, which `fromEnvironment` turns into the option's meaning (decision 166).
 */
export interface ProviderConfig {
  readonly apiKey?: Config.Config<Redacted.Redacted>
  readonly model?: Config.Config<string>
  readonly baseUrl?: Config.Config<Option.Option<string>>
}

/** Reads a hosted provider's API key (required, not blank), model (default `defaultModel`) and base URL (optional). */
export const readProviderConfig = (
  prefix: string,
  defaultModel: string,
  options: ProviderConfig | undefined,
  fromEnvironment: (value: string) => string = (value) => value
) =>
  Effect.gen(function*() {
    const apiKey = yield* (options?.apiKey ?? Config.map(requiredString(`${prefix}_API_KEY`), Redacted.make))
    const model = yield* (options?.model ?? stringWithDefault(`${prefix}_MODEL`, defaultModel))
    const baseUrl = yield* (options?.baseUrl ?? Config.map(optionalString(`${prefix}_BASE_URL`), Option.map(fromEnvironment)))
    return { apiKey, model, baseUrl: Option.getOrUndefined(baseUrl) }
  })
