// The concurrency-1 latency of tools/call as the MCP TypeScript SDK's client sees it (the SDK
// Claude Desktop is built on; it validates results with a compiled Ajv validator), next to the
// same Nextcloud requests made directly with Node's fetch. Driven by bench/ts_client.py.
//
// usage: node bench/ts_client.mjs <config json>
//   config: {mcp, nextcloud, user, password, calls: [{kind, tool, args, path}], rounds, propfind}
// stdout: one JSON object: {"direct": {kind: [ms, ...]}, "mcp": {kind: [ms, ...]}}
//
// The SDK is the one the tests install (tests/idp/node_modules), imported by path.
const sdk = new URL('../tests/idp/node_modules/@modelcontextprotocol/sdk/dist/esm/', import.meta.url);
const { Client } = await import(new URL('client/index.js', sdk));
const { StreamableHTTPClientTransport } = await import(new URL('client/streamableHttp.js', sdk));

const config = JSON.parse(process.argv[2]);
const auth = 'Basic ' + Buffer.from(`${config.user}:${config.password}`).toString('base64');
const notes = `${config.nextcloud}/index.php/apps/notes/api/v1/notes`;
const files = `${config.nextcloud}/remote.php/dav/files/${config.user}`;

async function direct(call) {
  let response;
  if (call.kind === 'notes_list') {
    response = await fetch(`${notes}?chunkSize=200&exclude=content`, { headers: { Authorization: auth, Accept: 'application/json' } });
    await response.json();
  } else if (call.kind === 'note_get') {
    response = await fetch(`${notes}/${call.args.note_id}`, { headers: { Authorization: auth, Accept: 'application/json' } });
    await response.json();
  } else if (call.kind === 'webdav_list') {
    response = await fetch(`${files}/${call.args.path}/`, {
      method: 'PROPFIND',
      headers: { Authorization: auth, Depth: '1', 'Content-Type': 'application/xml; charset=utf-8' },
      body: config.propfind,
    });
    await response.arrayBuffer();
  } else {
    throw new Error(`unknown kind ${call.kind}`);
  }
  if (response.status !== 200 && response.status !== 207) throw new Error(`${call.kind}: HTTP ${response.status}`);
}

const client = new Client({ name: 'bench-ts-client', version: '1.0.0' }, { capabilities: {} });
await client.connect(new StreamableHTTPClientTransport(new URL(config.mcp)));
await client.listTools(); // compiles the output validators, as a client does before calling
async function viaMcp(call) {
  const result = await client.callTool({ name: call.tool, arguments: call.args });
  if (result.isError) throw new Error(`${call.tool}: ${JSON.stringify(result.content).slice(0, 200)}`);
}

const targets = { direct, mcp: viaMcp };
const times = { direct: {}, mcp: {} };
for (const perform of Object.values(targets)) for (const call of config.calls.slice(0, 30)) await perform(call);
const share = Math.max(1, Math.floor(config.calls.length / config.rounds));
for (let round = 0; round < config.rounds; round++) {
  const order = round % 2 ? ['mcp', 'direct'] : ['direct', 'mcp'];
  for (const key of order) {
    for (const call of config.calls.slice(round * share, (round + 1) * share)) {
      const started = performance.now();
      await targets[key](call);
      (times[key][call.kind] ??= []).push(performance.now() - started);
    }
  }
}
await client.close();
console.log(JSON.stringify(times));
