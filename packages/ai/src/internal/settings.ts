/**
 * Model settings on the wire: which fields a request sets, and a warning for the ones a
 * provider cannot take (docs/decisions/060) — logged once per field and model, never dropped
 * silently.
 */
import type { ChatModel } from "@agentfx/core"
import { Effect } from "effect"

/** A field of `ModelSettings`. */
export type Field = keyof ChatModel.ModelSettings

/** Every field (a record, so that a field added to `ModelSettings` must be listed here). */
const every: { readonly [K in Field]: true } = { temperature: true, topP: true, maxOutputTokens: true, stop: true, parallelToolCalls: true }

/** Every field of `ModelSettings`, in a fixed order. */
export const allFields = Object.keys(every) as ReadonlyArray<Field>

/** The fields `settings` sets (not undefined), in a fixed order. */
export const setFields = (settings: ChatModel.ModelSettings | undefined): ReadonlyArray<Field> =>
  settings === undefined ? [] : allFields.filter((field) => settings[field] !== undefined)

/**
 * Logs a warning the first time a request sets one of `ignoredFields` (once per field, for the
 * model this belongs to): `provider` does not take them, `why` says what to do instead.
 */
export const warnIgnored = (provider: string, ignoredFields: ReadonlyArray<Field>, why: string) => {
  const warned = new Set<Field>()
  return (settings: ChatModel.ModelSettings | undefined): Effect.Effect<void> =>
    Effect.suspend(() => {
      const fresh = setFields(settings).filter((field) => ignoredFields.includes(field) && !warned.has(field))
      if (fresh.length === 0) return Effect.void
      for (const field of fresh) warned.add(field)
      return Effect.logWarning(`${provider} ignores ${fresh.map((field) => `settings.${field}`).join(", ")}: ${why}`)
    })
}

/** `fields` without the ones that are undefined: a request body leaves out the settings not set. */
export const defined = (fields: { readonly [name: string]: unknown }): { readonly [name: string]: unknown } =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
