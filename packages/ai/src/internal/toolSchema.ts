/**
 * Tool parameter schemas as providers are sent them.
 */
import type { JSONSchema } from "effect"

/**
 * The tool's JSON Schema without its `$schema` key (a draft marker providers do not need
 * and strict validators may refuse); `$defs` and `$ref`s stay, relative to this root.
 */
export const wireParameters = (parameters: JSONSchema.JsonSchema7Root): JSONSchema.JsonSchema7 => {
  const { $schema: _draft, ...rest } = parameters
  return rest as JSONSchema.JsonSchema7
}
