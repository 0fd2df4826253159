// What both views share: the App bridge to the host, safe DOM building (text only, never HTML from
// data), bounds on what is drawn, and the look. Data comes from the host: the tool's input and
// result, and the answers of read tools the view calls through the host (callServerTool).
import { App } from '@modelcontextprotocol/ext-apps';

export const VERSION = '1';
const MAX_TEXT = 20000; // characters of one text shown (a note's content); the rest is cut, and said so

/** An element with attributes (class, title, data-*) and children (strings become text nodes). */
export function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs ?? {})) {
    if (value !== undefined && value !== null) node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child);
  }
  return node;
}

/** Text of at most MAX_TEXT characters, and whether it was cut. */
export function bounded(text, limit = MAX_TEXT) {
  const value = typeof text === 'string' ? text : '';
  return value.length > limit ? [value.slice(0, limit), true] : [value, false];
}

/** The text parts of a tool result, joined (what a host without UI shows). */
export function textOf(result) {
  return (result?.content ?? [])
    .filter((part) => part?.type === 'text')
    .map((part) => String(part.text))
    .join('\n');
}

export function show(...nodes) {
  const root = document.getElementById('root');
  root.replaceChildren(...nodes.flat().filter((node) => node !== null && node !== undefined && node !== false));
  root.setAttribute('aria-busy', 'false');
}

export function problem(message) {
  show(el('p', { class: 'problem', role: 'alert' }, message));
}

/**
 * Connect to the host. `onInput(args)` gets the tool's arguments, `onResult(result, args)` the
 * tool's result; both may be async and get the App as last argument (for callServerTool).
 */
export function start(name, { onInput, onResult }) {
  const app = new App({ name, version: VERSION }, {}, { autoResize: true });
  let args = {};
  app.ontoolinput = (params) => {
    args = params?.arguments ?? {};
    Promise.resolve(onInput?.(args, app)).catch((error) => problem(String(error?.message ?? error)));
  };
  app.ontoolresult = (result) => {
    Promise.resolve(onResult(result, args, app)).catch((error) => problem(String(error?.message ?? error)));
  };
  app.onhostcontextchanged = (context) => theme(context);
  app
    .connect()
    .then(() => theme(app.getHostContext()))
    .catch((error) => problem(`Cannot reach the host: ${error?.message ?? error}`));
  return app;
}

function theme(context) {
  if (context?.theme === 'dark' || context?.theme === 'light') {
    document.documentElement.dataset.theme = context.theme;
  }
}

/** Call a read tool of this server through the host; its structured content, or throws its text. */
export async function read(app, name, args) {
  const result = await app.callServerTool({ name, arguments: args });
  if (result?.isError || !result?.structuredContent) {
    throw new Error(textOf(result) || `${name} gave no answer`);
  }
  return result.structuredContent;
}
