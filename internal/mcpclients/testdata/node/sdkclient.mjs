// sdkclient.mjs SPEC: the official TypeScript SDK's MCP client connects to
// Pinky as SPEC (a JSON object) says, lists the tools and makes the calls,
// in order, then prints one JSON object on stdout:
//   {server, protocolVersion, capabilities, tools: [names],
//    results: [{text, isError, structured} or {rpcError}]}
// SPEC: {transport: "stdio", command, args, env} or
//       {transport: "http", url, token}, and calls: [{name, arguments}].
// A call that the SDK refuses (a JSON-RPC error, or a result that does
// not match the tool's output schema) is reported as rpcError, not thrown.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const spec = JSON.parse(process.argv[2]);
let transport;
if (spec.transport === "stdio") {
  transport = new StdioClientTransport({ command: spec.command, args: spec.args, env: spec.env, stderr: "inherit" });
} else {
  transport = new StreamableHTTPClientTransport(new URL(spec.url), {
    requestInit: { headers: { Authorization: `Bearer ${spec.token}` } },
  });
}
const client = new Client({ name: "pinky-mcpclients-test", version: "1.0.0" });
await client.connect(transport);
const out = {
  server: client.getServerVersion(),
  protocolVersion: transport.protocolVersion ?? null,
  capabilities: client.getServerCapabilities(),
  tools: (await client.listTools()).tools.map((t) => t.name),
  results: [],
};
for (const call of spec.calls) {
  try {
    const res = await client.callTool({ name: call.name, arguments: call.arguments });
    const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("");
    out.results.push({ text, isError: res.isError === true, structured: res.structuredContent ?? null });
  } catch (err) {
    out.results.push({ rpcError: String(err?.message ?? err) });
  }
}
if (spec.transport === "http") {
  await transport.terminateSession();
}
await client.close();
process.stdout.write(JSON.stringify(out) + "\n");
