/**
 * An MCP tool descriptor → an agentfx `Tool`: schemas, annotations, overrides, results.
 */
import { Json, Tool, ToolError } from "@agentfx/core"
import type { JsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import type { CallToolResult, ContentBlock, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { Effect, ParseResult, Schema } from "effect"
import type { McpTool as AgentTool, ToolOverride } from "../McpToolkit.js"
import { describeError } from "./connection.js"

/** Arguments as the model sent them: a JSON object, checked against the server's schema. */
export type Arguments = { readonly [key: string]: unknown }

/**
 * A schema's validator, compiled by an Ajv of its own: the SDK's validator takes a schema with
 * an `$id` it has seen for that schema, so a shared one would check a tool against another
 * tool's schema (or another server's, or a tool's schema before a refresh) with the same
 * `$id`. A check that throws (a recursive schema exhausting the stack on a deep value) is a
 * failed check.
 */
const compile = <T>(schema: object): JsonSchemaValidator<T> => {
  const validate = new AjvJsonSchemaValidator().getValidator<T>(schema as never)
  return (input) => {
    try {
      return validate(input)
    } catch (error) {
      return { valid: false, data: undefined, errorMessage: `the check threw ${String(error)}` }
    }
  }
}

/** The validator of an input schema; one that Ajv cannot compile is reported and checks only that the arguments are an object. */
const inputValidator = (tool: McpTool, problems: Array<string>): JsonSchemaValidator<Arguments> => {
  try {
    return compile<Arguments>(tool.inputSchema)
  } catch (error) {
    problems.push(`the input schema of tool "${tool.name}" cannot be compiled (${describeError(error)}); its arguments are checked by the server only`)
    return (input) =>
      typeof input === "object" && input !== null && !Array.isArray(input)
        ? { valid: true, data: input as Arguments, errorMessage: undefined }
        : { valid: false, data: undefined, errorMessage: "arguments must be an object" }
  }
}

/** The validator of a declared output schema; one that Ajv cannot compile is reported and lets any structured content through. */
const outputValidator = (tool: McpTool, problems: Array<string>): JsonSchemaValidator<unknown> | undefined => {
  if (tool.outputSchema === undefined) return undefined
  try {
    return compile<unknown>(tool.outputSchema)
  } catch (error) {
    problems.push(`the output schema of tool "${tool.name}" cannot be compiled (${describeError(error)}); its structured content is not checked`)
    return (input) => ({ valid: true, data: input, errorMessage: undefined })
  }
}

const parametersOf = (schema: McpTool["inputSchema"], validate: JsonSchemaValidator<Arguments>): Schema.Schema<Arguments> =>
  Schema.declare<Arguments, Arguments, readonly []>([], {
    decode: () => (input, _options, ast) => {
      const checked = validate(input)
      return checked.valid ? ParseResult.succeed(input as Arguments) : ParseResult.fail(new ParseResult.Type(ast, input, checked.errorMessage))
    },
    encode: () => (input) => ParseResult.succeed(input as Arguments)
  }, { jsonSchema: schema }) // sent to the model as the server gave it (Tool.parametersJsonSchema)

/** The size of what a base64 string encodes. */
const bytes = (base64: string) => `${Math.floor((base64.length * 3) / 4) - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0)} bytes`

/** One content block as text: text as is, the rest described on one line. */
const textOf = (block: ContentBlock): string => {
  switch (block.type) {
    case "text":
      return block.text
    case "image":
    case "audio":
      return `[${block.type}: ${block.mimeType}, ${bytes(block.data)}]`
    case "resource_link":
      return `[resource: ${block.uri}${block.mimeType === undefined ? "" : ` (${block.mimeType})`}]`
    case "resource":
      return "text" in block.resource
        ? block.resource.text
        : `[resource: ${block.resource.uri}${block.resource.mimeType === undefined ? "" : ` (${block.resource.mimeType})`}, ${
          bytes(block.resource.blob)
        }]`
  }
}

const contentText = (result: CallToolResult) => result.content.map(textOf).join("\n")

/**
 * What the model gets from a result: structured content when the tool declares an output
 * schema (checked against it here: the SDK's own check keeps only the last page of a paginated
 * tool list), else the text.
 */
const valueOf = (
  tool: McpTool,
  server: string,
  checkOutput: JsonSchemaValidator<unknown> | undefined,
  result: CallToolResult
): Effect.Effect<Json.JsonValue, ToolError.ToolError> => {
  const what = `MCP server "${server}", tool "${tool.name}"`
  if (result.isError === true) {
    const text = contentText(result)
    return Effect.fail(ToolError.semantic(text.length > 0 ? text : `${what}: the tool failed and said nothing`))
  }
  if (checkOutput === undefined) return Effect.succeed(contentText(result))
  if (result.structuredContent === undefined) {
    return Effect.fail(ToolError.semantic(`${what}: the tool declares an output schema but answered without structured content`))
  }
  const checked = checkOutput(result.structuredContent)
  return checked.valid
    ? Effect.succeed(result.structuredContent as Json.JsonValue)
    : Effect.fail(ToolError.semantic(`${what}: the structured content does not match the tool's output schema: ${checked.errorMessage}`))
}

/** What the annotations say, with MCP's defaults (a tool that says nothing may destroy and reaches the open world). */
const hintsOf = (tool: McpTool) => {
  const readOnly = tool.annotations?.readOnlyHint === true
  return {
    readOnly,
    destructive: !readOnly && tool.annotations?.destructiveHint !== false,
    idempotent: readOnly || tool.annotations?.idempotentHint === true,
    openWorld: tool.annotations?.openWorldHint !== false
  }
}

/** True when the tool can only run as an MCP task (`execution.taskSupport: "required"`), which `tools/call` refuses. */
export const needsTask = (tool: McpTool) => tool.execution?.taskSupport === "required"


/** The agentfx tool for one MCP tool; `call` runs `tools/call` on the current connection. */
export const toTool = (
  tool: McpTool,
  options: {
    readonly server: string
    readonly prefix: string
    readonly override: ToolOverride | undefined
    readonly call: (name: string, args: Arguments) => Effect.Effect<CallToolResult, ToolError.ToolError>
  }
): { readonly tool: AgentTool; readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const validate = inputValidator(tool, problems)
  const checkOutput = outputValidator(tool, problems)
  const hints = hintsOf(tool)
  const tags = ["mcp", ...(["readOnly", "destructive", "idempotent", "openWorld"] as const).filter((hint) => hints[hint])]
  const override = options.override ?? {}
  return {
    problems,
    tool: Tool.make(`${options.prefix}${tool.name}`, {
      description: tool.description ?? tool.annotations?.title ?? tool.title ?? "",
      parameters: parametersOf(tool.inputSchema, validate),
      success: Json.JsonValue,
      tags,
      needsApproval: hints.destructive,
      ...Tool.overridesOf(override),
      handler: (args) =>
        options.call(tool.name, args).pipe(
          Effect.flatMap((result) => valueOf(tool, options.server, checkOutput, result)),
          Effect.withSpan("McpToolkit.call", { attributes: { "mcp.server": options.server, "mcp.tool": tool.name } })
        )
    })
  }
}
