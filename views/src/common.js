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

// Characters that hide or reorder what is drawn (the server's rule, nextcloud/names.py: HIDDEN and
// INVISIBLE): a view shows each by name, ⟦U+202E⟧, never passes it on to the page, so a
// right-to-left override cannot make "exe.pdf" look like "fdp.exe" and nothing hides in a text.
const HIDDEN =
  /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff\x00-\x08\x0b-\x1f\x7f-\x9f\u00ad\u034f\u115f\u1160\u17b4\u17b5\u180e\u2061-\u2064\u206a-\u206f\u3164\uffa0\ufff9-\ufffb]|\udb40[\udc00-\udc7f]/g;
const BLANK_RUN = /(?:[ \t]*\n){4,}/g;

/** How many characters of `text` hide or reorder what is drawn. */
export function hiddenCount(text) {
  return (String(text ?? '').match(HIDDEN) ?? []).length;
}

/** `text` with every hidden or direction character named (⟦U+202E⟧), and four or more line breaks
 * in a row said as one line ("⟦7 empty lines⟧"), so nothing is pushed out of sight. */
export function visible(text) {
  return String(text ?? '')
    .replace(HIDDEN, (c) => `⟦U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, '0')}⟧`)
    .replace(BLANK_RUN, (run) => `\n⟦${run.split('\n').length - 2} empty lines⟧\n`);
}

/** Text cut to `limit` characters (no note that it was cut: for names and short values). */
export function short(text, limit = 300) {
  return bounded(String(text ?? ''), limit)[0];
}

// The person's locale and time zone: what the host says (hostContext.locale, .timeZone), else
// what the browser says (Intl). Times are written in that zone and format, and the zone is named
// once per view (`zoneNote`), never on every row.
let context = {};

export function useContext(hostContext) {
  if (hostContext && typeof hostContext === 'object') context = { ...context, ...hostContext };
}

export function personLocale() {
  const wanted = [context.locale, navigator.language, 'en-US'].filter((l) => typeof l === 'string' && l);
  for (const locale of wanted) {
    try {
      return new Intl.DateTimeFormat(locale).resolvedOptions().locale;
    } catch {
      // not a locale the browser knows: the next one
    }
  }
  return 'en-US';
}

export function personZone() {
  const wanted = [context.timeZone, Intl.DateTimeFormat().resolvedOptions().timeZone, 'UTC'];
  for (const zone of wanted.filter((z) => typeof z === 'string' && z)) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: zone });
      return zone;
    } catch {
      // not a zone the browser knows: the next one
    }
  }
  return 'UTC';
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * An ISO 8601 date or time as the person writes it: "28 Nov 2026, 01:23" (en-GB, Europe/Berlin)
 * for "2026-11-28T00:23:03Z". A time with an offset is converted to the person's zone; a floating
 * time (no offset) and a date are written as they are. Anything else is shown as text, cut.
 */
export function localTime(value) {
  const text = String(value ?? '').trim();
  try {
    const day = DATE_ONLY.exec(text);
    if (day) {
      const date = new Date(Date.UTC(Number(day[1]), Number(day[2]) - 1, Number(day[3])));
      return new Intl.DateTimeFormat(personLocale(), { dateStyle: 'medium', timeZone: 'UTC' }).format(date);
    }
    const at = DATE_TIME.exec(text);
    if (at) {
      const floating = !at[7];
      const date = floating
        ? new Date(Date.UTC(Number(at[1]), Number(at[2]) - 1, Number(at[3]), Number(at[4]), Number(at[5])))
        : new Date(text.replace(' ', 'T'));
      if (!Number.isNaN(date.getTime())) {
        const zone = floating ? 'UTC' : personZone();
        if (!floating) converted = true;
        return new Intl.DateTimeFormat(personLocale(), { dateStyle: 'medium', timeStyle: 'short', timeZone: zone }).format(date);
      }
    }
  } catch {
    // shown as text below
  }
  return short(text, 40);
}

/** "4 Dec 2026, 10:00–10:30": two times as one span in the person's zone and format (Intl's
 * formatRange says the shared date once); other values as two `localTime`s. */
export function localSpan(start, end) {
  const a = DATE_TIME.exec(String(start ?? '').trim());
  const b = DATE_TIME.exec(String(end ?? '').trim());
  if (a?.[7] && b?.[7]) {
    const from = new Date(String(start).trim().replace(' ', 'T'));
    const until = new Date(String(end).trim().replace(' ', 'T'));
    if (!Number.isNaN(from.getTime()) && !Number.isNaN(until.getTime()) && from <= until) {
      try {
        const format = new Intl.DateTimeFormat(personLocale(), { dateStyle: 'medium', timeStyle: 'short', timeZone: personZone() });
        converted = true;
        return format.formatRange(from, until);
      } catch {
        // as two times below
      }
    }
  }
  return `${localTime(start)} – ${localTime(end)}`;
}

let converted = false; // whether a time was converted to the person's zone since `timesConverted(true)`

/** Whether a time shown since the last reset was converted to the person's zone (then the zone is
 * named once, `zoneNote`); `reset` starts counting again. */
export function timesConverted(reset = false) {
  const was = converted;
  if (reset) converted = false;
  return was;
}

/** "Times in Europe/Berlin": said once under a view that shows converted times. */
export function zoneNote() {
  return el('p', { class: 'meta zone-note' }, `Times in ${personZone()}`);
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
    useContext(app.getHostContext());
    args = params?.arguments ?? {};
    Promise.resolve(onInput?.(args, app)).catch((error) => problem(String(error?.message ?? error)));
  };
  app.ontoolresult = (result) => {
    useContext(app.getHostContext());
    Promise.resolve(onResult(result, args, app)).catch((error) => problem(String(error?.message ?? error)));
  };
  app.onhostcontextchanged = (changed) => {
    useContext(changed);
    theme(changed);
  };
  app
    .connect()
    .then(() => {
      useContext(app.getHostContext());
      theme(app.getHostContext());
    })
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
