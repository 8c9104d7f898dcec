/**
 * An MCP tool descriptor → an agentfx `Tool`: schemas, annotations, overrides, results.
 */
import { Json, Part, Tool, ToolError } from "@agentfx/core"
import type { CallToolResult, ContentBlock, Tool as McpTool } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Schema, SchemaIssue } from "effect"
import type { McpTool as AgentTool, ToolOverride } from "../McpToolkit.js"
import type { Checked, Checker, Compiled } from "./checker.js"

/** Arguments as the model sent them: a JSON object, checked against the server's schema. */
export type Arguments = { readonly [key: string]: unknown }

/** A tool whose schemas are compiled on the checker thread: the input schema, and the output schema when it declares one. */
export interface Prepared {
  readonly tool: McpTool
  readonly input: Compiled
  readonly output: Compiled | undefined
}

/** Compiles a tool's schemas, or fails with why the tool is left out (a schema that does not compile). */
export const prepare = (checker: Checker, tool: McpTool): Effect.Effect<Prepared, string> =>
  Effect.all({
    input: checker.compile(tool.inputSchema, "its input schema"),
    output: tool.outputSchema === undefined ? Effect.succeed(undefined) : checker.compile(tool.outputSchema, "its output schema")
  }).pipe(
    Effect.map(({ input, output }) => ({ tool, input, output })),
    Effect.mapError((why) => `tool "${tool.name}" is left out: ${why}`)
  )

/**
 * The server's input schema as a tool's parameters: sent to the model as is, and checked on the
 * checker thread when decoded (when encoded too: a declaration has one check for both, decision 140).
 */
const parametersOf = (schema: McpTool["inputSchema"], check: (input: unknown) => Effect.Effect<Checked>): Schema.Codec<Arguments> =>
  Schema.declareConstructor<Arguments>()(
    [],
    () => (input) =>
      Effect.flatMap(check(input), (checked) =>
        checked.valid
          ? Effect.succeed(input as Arguments)
          : Effect.fail(new SchemaIssue.InvalidValue({ message: checked.errorMessage }, input))),
    { jsonSchema: schema } // sent to the model as the server gave it (Tool.parametersJsonSchema)
  )

/** The size of what a base64 string encodes. */
const bytes = (base64: string) => `${Math.floor((base64.length * 3) / 4) - (base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0)} bytes`

const isFile = Schema.is(Part.FilePart)

/**
 * A content block that is a file — an image, audio, an embedded resource's bytes (`blob`) —
 * as a file part, when it is a valid one (a media type, base64); else `undefined`.
 */
const fileOf = (block: ContentBlock): Part.FilePart | undefined => {
  const file = block.type === "image" || block.type === "audio"
    ? Part.file({ mediaType: block.mimeType, data: block.data })
    : block.type === "resource" && "blob" in block.resource
    ? Part.file({ mediaType: block.resource.mimeType ?? "application/octet-stream", name: block.resource.uri, data: block.resource.blob })
    : undefined
  return file !== undefined && isFile(file) ? file : undefined
}

/** One content block as text, unless it is a file (which goes to the model as one): text as is, the rest described on one line. */
const textOf = (block: ContentBlock): ReadonlyArray<string> => {
  if (fileOf(block) !== undefined) return []
  switch (block.type) {
    case "text":
      return [block.text]
    case "image":
    case "audio":
      return [`[${block.type}: ${block.mimeType}, ${bytes(block.data)}]`]
    case "resource_link":
      return [`[resource: ${block.uri}${block.mimeType === undefined ? "" : ` (${block.mimeType})`}]`]
    case "resource":
      return "text" in block.resource
        ? [block.resource.text]
        : [`[resource: ${block.resource.uri}${block.resource.mimeType === undefined ? "" : ` (${block.resource.mimeType})`}, ${bytes(block.resource.blob)}]`]
  }
}

const contentText = (result: CallToolResult) => result.content.flatMap(textOf).join("\n")

/**
 * What the model gets from a result: structured content when the tool declares an output
 * schema (checked against it here: the SDK's own check keeps only the last page of a paginated
 * tool list), else the text; with the files among its content (images, audio, embedded
 * resources' bytes) beside it. A file block that is not a valid file (no media type, bad
 * base64) is described in the text instead.
 */
const valueOf = (
  tool: McpTool,
  server: string,
  checkOutput: ((value: unknown) => Effect.Effect<Checked>) | undefined,
  result: CallToolResult
): Effect.Effect<Json.JsonValue | Tool.Output<Json.JsonValue>, ToolError.ToolError> => {
  const what = `MCP server "${server}", tool "${tool.name}"`
  if (result.isError === true) {
    const text = contentText(result)
    return Effect.fail(ToolError.semantic(text.length > 0 ? text : `${what}: the tool failed and said nothing`))
  }
  const files = result.content.flatMap((block) => fileOf(block) ?? [])
  const withFiles = (value: Json.JsonValue) => files.length === 0 ? value : Tool.output(value, { files })
  if (checkOutput === undefined) return Effect.succeed(withFiles(contentText(result)))
  const structured = result.structuredContent
  if (structured === undefined) {
    return Effect.fail(ToolError.semantic(`${what}: the tool declares an output schema but answered without structured content`))
  }
  return Effect.flatMap(checkOutput(structured), (checked) =>
    checked.valid
      ? Effect.succeed(withFiles(structured as Json.JsonValue))
      : Effect.fail(ToolError.semantic(`${what}: the structured content does not match the tool's output schema: ${checked.errorMessage}`)))
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

/** The agentfx tool for one MCP tool; its checks run on `checker`, and `call` runs `tools/call` on the current connection. */
export const toTool = (
  { input, output, tool }: Prepared,
  options: {
    readonly server: string
    readonly prefix: string
    readonly override: ToolOverride | undefined
    readonly checker: Checker
    readonly call: (name: string, args: Arguments) => Effect.Effect<CallToolResult, ToolError.ToolError>
  }
): AgentTool => {
  const { checker } = options
  const hints = hintsOf(tool)
  const tags = ["mcp", ...(["readOnly", "destructive", "idempotent", "openWorld"] as const).filter((hint) => hints[hint])]
  const checkOutput = output === undefined ? undefined : (value: unknown) => checker.check(output, value)
  return Tool.make(`${options.prefix}${tool.name}`, {
    description: tool.description ?? tool.annotations?.title ?? tool.title ?? "",
    parameters: parametersOf(tool.inputSchema, (value) => checker.check(input, value)),
    success: Json.JsonValue,
    tags,
    needsApproval: hints.destructive,
    ...Tool.overridesOf(options.override ?? {}),
    handler: (args) =>
      options.call(tool.name, args).pipe(
        Effect.flatMap((result) => valueOf(tool, options.server, checkOutput, result)),
        Effect.withSpan("McpToolkit.call", { attributes: { "mcp.server": options.server, "mcp.tool": tool.name } })
      )
  })
}
