// The TypeScript SDK's own OAuth client against this server as authorization server: discovery
// from the 401, dynamic registration, PKCE with `resource`, the code exchange, a tool call, then a
// refresh (the access token is spoiled so the next call meets a 401 and the SDK refreshes).
//
// usage: node oauth_client.mjs <mcp url> <redirect uri> <tool> <json arguments>
// stdout: one JSON line per event: {"authorize": url}, then it reads one line on stdin - the URL
// the person's browser landed on - then {"result": ...}, {"refreshed": ...}, {"again": ...}
import readline from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';

const [url, redirectUrl, tool, args] = process.argv.slice(2);
const say = (event) => console.log(JSON.stringify(event));
const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const store = {};
const provider = {
  get redirectUrl() { return redirectUrl; },
  get clientMetadata() {
    return {
      client_name: 'ts sdk test client', redirect_uris: [redirectUrl], token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
    };
  },
  state: () => 'ts-state',
  clientInformation: () => store.client,
  saveClientInformation: (client) => { store.client = client; },
  tokens: () => store.tokens,
  saveTokens: (tokens) => { store.tokens = tokens; },
  redirectToAuthorization: (authorizationUrl) => say({ authorize: authorizationUrl.href }),
  saveCodeVerifier: (verifier) => { store.verifier = verifier; },
  codeVerifier: () => store.verifier,
};

const connect = async () => {
  const client = new Client({ name: 'ts-sdk-oauth-test-client', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { authProvider: provider }));
  return client;
};

let client;
try {
  client = await connect();
} catch (error) {
  if (!(error instanceof UnauthorizedError)) throw error;
  const landed = new URL((await lines.next()).value);
  const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  await transport.finishAuth(landed.searchParams.get('code'));
  client = await connect();
}
const call = () => client.callTool({ name: tool, arguments: JSON.parse(args || '{}') });
say({ result: await call(), client_id: store.client.client_id, scope: store.tokens.scope });
const first = store.tokens.refresh_token;
store.tokens = { ...store.tokens, access_token: 'spoiled' };
await client.close();
client = await connect();
say({ refreshed: store.tokens.refresh_token !== first && store.tokens.access_token !== 'spoiled' });
say({ again: await call() });
await client.close();
process.exit(0);
