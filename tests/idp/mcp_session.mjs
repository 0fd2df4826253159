// The TypeScript SDK's MCP client as a long-lived peer for the tests (tests/ts_client.py): one
// process serves a whole test module. It reads one JSON request per line on stdin and answers
// each with one JSON line on stdout, in order:
//   {"id": 1, "op": "open", "name": "n", "url": "http://.../mcp", "human": "decline"}
//       connects a Client over streamable HTTP and lists the tools, as hosts do (this is where the
//       SDK compiles each output schema it later checks results against). With "human"
//       ("accept", "decline" or "cancel") it declares form elicitation and answers every form so;
//       without, it declares no elicitation. Answer: {"id": 1, "tools": [names]}
//   {"id": 2, "op": "call", "name": "n", "tool": "t", "arguments": {...}}
//       Answer: {"id": 2, "result": CallToolResult, "asked": [messages]}, or
//       {"id": 2, "error": {"code": -32602, "message": "..."}, "asked": [...]} when callTool throws
//   {"id": 3, "op": "list", "name": "n"}
//       lists the tools again. Answer: {"id": 3, "tools": [names], "changed": n}, n being how many
//       notifications/tools/list_changed the session has received
//   {"id": 4, "op": "prompts", "name": "n"}  -> {"id": 4, "prompts": [Prompt]}
//   {"id": 5, "op": "prompt", "name": "n", "prompt": "p", "arguments": {...}}
//       Answer: {"id": 5, "result": GetPromptResult}, or {"id": 5, "error": {...}} when it throws
//   {"id": 6, "op": "close", "name": "n"}
// Anything else going wrong answers {"id": ..., "failure": "..."}.
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const clients = new Map();
const say = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);

async function open({ name, url, human, headers }) {
  const capabilities = human ? { elicitation: { form: {} } } : {};
  const client = new Client({ name: `ts-sdk-${name}`, version: '1.0.0' }, { capabilities });
  const asked = [];
  if (human) {
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return human === 'accept' ? { action: 'accept', content: { approve: true } } : { action: human };
    });
  }
  const entry = { client, asked, changed: 0 };
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    entry.changed += 1;
  });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: headers ?? {} } });
  await client.connect(transport);
  const { tools } = await client.listTools();
  clients.set(name, entry);
  return { tools: tools.map((tool) => tool.name) };
}

async function call({ name, tool, arguments: args }) {
  const { client, asked } = clients.get(name);
  const before = asked.length;
  try {
    const result = await client.callTool({ name: tool, arguments: args ?? {} });
    return { result, asked: asked.slice(before) };
  } catch (error) {
    return { error: { code: error.code ?? null, message: String(error.message ?? error) }, asked: asked.slice(before) };
  }
}

async function list({ name }) {
  const entry = clients.get(name);
  const { tools } = await entry.client.listTools();
  return { tools: tools.map((tool) => tool.name), changed: entry.changed };
}

async function prompts({ name }) {
  const { client } = clients.get(name);
  return { prompts: (await client.listPrompts()).prompts, capabilities: client.getServerCapabilities() };
}

async function prompt({ name, prompt: wanted, arguments: args }) {
  const { client } = clients.get(name);
  try {
    return { result: await client.getPrompt({ name: wanted, arguments: args ?? {} }) };
  } catch (error) {
    return { error: { code: error.code ?? null, message: String(error.message ?? error) } };
  }
}

async function close({ name }) {
  const entry = clients.get(name);
  clients.delete(name);
  await entry?.client.close();
  return { closed: name };
}

const ops = { open, call, list, prompts, prompt, close };
for await (const line of createInterface({ input: process.stdin })) {
  const { id, op, ...params } = JSON.parse(line);
  try {
    say({ id, ...(await ops[op](params)) });
  } catch (error) {
    say({ id, failure: String(error?.stack ?? error) });
  }
}
for (const { client } of clients.values()) await client.close();
