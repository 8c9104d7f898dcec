/**
 * Config helpers shared by the adapters' `layerConfig`.
 */
import { Config, Option } from "effect"

/** An optional string setting; a blank value (`OPENAI_MODEL=` in a .env file) counts as unset. */
export const optionalString = (name: string): Config.Config<Option.Option<string>> =>
  Config.map(Config.option(Config.string(name)), Option.filter((value) => value.trim().length > 0))

/** A string setting with a default for when it is unset or blank. */
export const stringWithDefault = (name: string, fallback: string): Config.Config<string> =>
  Config.map(optionalString(name), Option.getOrElse(() => fallback))
