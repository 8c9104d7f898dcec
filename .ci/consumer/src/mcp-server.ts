/** A one-tool MCP server over stdio (the SDK's low-level `Server`), for `mcp.ts`. */
import { Server } from "@modelcontextprotocol/sdk/server/index.js"
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js"
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js"

const server = new Server({ name: "shouter", version: "1.0.0" }, { capabilities: { tools: {} } })
server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [{
    name: "shout",
    description: "Upper-cases a text",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    annotations: { readOnlyHint: true }
  }]
}))
server.setRequestHandler(CallToolRequestSchema, (request) => ({
  content: [{ type: "text", text: String(request.params.arguments?.["text"]).toUpperCase() }]
}))
process.stdin.on("end", () => process.exit(0))
await server.connect(new StdioServerTransport())
