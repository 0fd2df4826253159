// A second, independent MCP client for the tests: the TypeScript SDK over streamable HTTP,
// declaring URL elicitation. It calls one tool; on -32042 it prints the consent URL, waits for
// notifications/elicitation/complete, retries by itself and prints the result.
//
// usage: node mcp_client.mjs <mcp url> <tool> <json arguments>   (env BEARER_TOKEN)
// stdout: one JSON line per event: {"elicitation": {...}}, {"completed": id}, {"result": {...}}
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, ElicitationCompleteNotificationSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';

const [url, tool, args] = process.argv.slice(2);
const say = (event) => console.log(JSON.stringify(event));
const client = new Client({ name: 'ts-sdk-test-client', version: '1.0.0' }, { capabilities: { elicitation: { form: {}, url: {} } } });
const completed = new Map();
client.setNotificationHandler(ElicitationCompleteNotificationSchema, async (notification) => {
  const id = notification.params.elicitationId;
  say({ completed: id });
  completed.get(id)?.();
});
client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));

const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${process.env.BEARER_TOKEN}` } },
});
await client.connect(transport);
const call = () => client.callTool({ name: tool, arguments: JSON.parse(args || '{}') });
let result;
try {
  result = await call();
} catch (error) {
  if (error.code !== ErrorCode.UrlElicitationRequired) throw error;
  const [elicitation] = error.data.elicitations;
  // the deadline is cleared once the notification came: a pending timer kept the process alive
  // for the whole 30 s after it had printed its result
  let deadline;
  const done = new Promise((resolve, reject) => {
    completed.set(elicitation.elicitationId, resolve);
    deadline = setTimeout(() => reject(new Error('no elicitation/complete within 30 s')), 30000);
  });
  say({ elicitation });
  await done;
  clearTimeout(deadline);
  result = await call();
}
say({ result: { isError: result.isError ?? false, structuredContent: result.structuredContent } });
await client.close();
