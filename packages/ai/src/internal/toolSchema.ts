/**
 * Tool parameter schemas as providers are sent them.
 */
import type { JsonSchema } from "effect"

/**
 * The tool's JSON Schema without its `$schema` key (a draft marker providers do not need
 * and strict validators may refuse); `$defs` and `$ref`s stay, relative to this root.
 */
export const wireParameters = (parameters: JsonSchema.JsonSchema7Root): JsonSchema.JsonSchema7 => {
  const { $schema: _draft, ...rest } = parameters
  return rest as JsonSchema.JsonSchema7
}
