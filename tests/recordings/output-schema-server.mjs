// A small stdio MCP server built on the official TypeScript SDK's McpServer, whose one
// tool declares an outputSchema and returns structured content that breaks it. The SDK,
// not this script, turns that into the `MCP error -32602: Output validation error` result
// the recording keeps: the tool's own failure, not the caller's.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "weather-demo", version: "0.3.1" });
server.registerTool(
  "get-forecast",
  {
    description: "Forecast for a city",
    inputSchema: { city: z.string() },
    outputSchema: { temperature_c: z.number(), summary: z.string() },
  },
  async ({ city }) => {
    // The bug this server ships with: a string where the schema promises a number.
    const structured = { temperature_c: city === "Lisbon" ? 21 : "unknown", summary: "mild" };
    return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
  },
);
await server.connect(new StdioServerTransport());
