// A small MCP Apps host for the tests (tests/views/test_views_browser.py), built on the package's
// own host side: AppBridge from @modelcontextprotocol/ext-apps/app-bridge with the TypeScript SDK's
// Client, talking to this server over streamable HTTP from the page (same origin as /mcp). It does
// what a chat host does with a tool that links a view: reads the `ui://` resource named in the
// tool's _meta, renders it in a sandboxed iframe (scripts only, an opaque origin), hands the view
// the tool's input, calls the tool, hands it the result. The view's own calls (callServerTool) go
// through the bridge to the same client. Bundled at test time by esbuild from views/node_modules.
//
//   await appsHost.connect('/mcp')
//   await appsHost.show('nc_calendar_list_events', {start, end})   // -> {uri, mimeType, meta, result}
//   appsHost.start('nc_webdav_delete_resource', {path}); ... appsHost.answer('decline')
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  getToolUiResourceUri,
} from '@modelcontextprotocol/ext-apps/app-bridge';

const HOST = { name: 'nextcloud-mcp-test-host', version: '1.0.0' };
let client;
let tools = [];
const asked = []; // the approval questions the server asked (form elicitation)
let answerWith = null; // resolves the pending question with the test's answer
let onAsk = null; // told each question as it comes (the preview page shows it with buttons)
const pending = new Map(); // tool name -> the promise of its call
// what the host tells the view about the person (ext-apps hostContext): locale and time zone
let person = { locale: 'en-US', timeZone: 'UTC' };
let frameWidth = null; // the iframe's width in CSS pixels (null: the page's default)

function waitForAnswer() {
  return new Promise((resolve) => {
    answerWith = resolve;
  });
}

async function connect(url) {
  client = new Client(HOST, {
    capabilities: {
      elicitation: { form: {} },
      extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [RESOURCE_MIME_TYPE] } },
    },
  });
  client.setRequestHandler('elicitation/create', async (request) => {
    asked.push(request.params.message);
    onAsk?.(request.params.message);
    const action = await waitForAnswer();
    return action === 'accept' ? { action, content: { approve: true } } : { action };
  });
  await client.connect(new StreamableHTTPClientTransport(new URL(url, location.href)));
  tools = (await client.listTools()).tools;
  return tools.map((tool) => tool.name);
}

async function mount(tool) {
  const uri = getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${tool.name} links no view`);
  const read = await client.readResource({ uri });
  const [content] = read.contents;
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is ${content.mimeType}`);
  const frame = document.createElement('iframe');
  frame.setAttribute('sandbox', 'allow-scripts');
  frame.setAttribute('title', tool.name);
  frame.id = 'view';
  if (frameWidth) frame.style.width = `${frameWidth}px`;
  document.getElementById('views').replaceChildren(frame);
  const bridge = new AppBridge(
    client,
    HOST,
    { serverTools: {}, logging: {}, openLinks: {} },
    { hostContext: { theme: 'light', ...person, displayMode: 'inline', toolInfo: { tool } } },
  );
  bridge.onsizechange = ({ height }) => {
    if (height) frame.style.height = `${Math.min(Math.ceil(height), 4000)}px`;
  };
  const ready = new Promise((resolve) => {
    bridge.oninitialized = resolve;
  });
  // listening before the view loads: it says hello (ui/initialize) as soon as its script runs
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = content.text;
  await ready;
  return { uri, content, bridge };
}

/** Render `name`'s view, give it the input, call the tool and give it the result. */
async function show(name, args) {
  const tool = tools.find((t) => t.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  const { uri, content, bridge } = await mount(tool);
  await bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name, arguments: args });
  await bridge.sendToolResult(result);
  return { uri, mimeType: content.mimeType, meta: content._meta ?? null, result };
}

/** As `show`, without waiting: the call may be waiting for an approval (`answer`). */
function start(name, args) {
  const call = show(name, args);
  call.catch(() => {});
  pending.set(name, call);
  return true;
}

function answer(action) {
  if (!answerWith) throw new Error('no question is waiting');
  const give = answerWith;
  answerWith = null;
  give(action);
  return true;
}

/** Run a tool without any view (what a host without UI support gets). */
async function call(name, args) {
  return client.callTool({ name, arguments: args });
}

window.appsHost = {
  connect,
  show,
  start,
  answer,
  call,
  finished: (name) => pending.get(name),
  /** The tools that link a view (what the preview page offers). */
  linked: () => tools.filter((tool) => getToolUiResourceUri(tool)).map((tool) => tool.name),
  asked: () => [...asked],
  waiting: () => answerWith !== null,
  onAsk: (fn) => {
    onAsk = fn;
    return true;
  },
  /** The person's locale and time zone the next views are told, and the width they get. */
  person: ({ locale, timeZone, width }) => {
    person = { locale, timeZone };
    frameWidth = width ?? null;
    return true;
  },
};
