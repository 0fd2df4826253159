// The pieces every approval preview is built from: a heading that names the thing, facts as
// label/value rows, a text shown as text, a before/after table for changes, and reads through the
// host that fall back to what the arguments say when the read tool is not there or fails.
import { el, hiddenCount, localSpan, localTime, read, short, visible } from '../common.js';

export { el, localSpan, localTime, short, visible };

const HEAD = 19000; // characters of a long text shown from its start ...
const TAIL = 1000; // ... and from its end, with what lies between counted

/** 'Projects' as a heading says it: quoted, hidden characters named, cut to 80 characters. */
export function named(text) {
  return `'${short(visible(text), 80)}'`;
}

export function heading(text) {
  return el('h1', {}, text);
}

/** Label/value rows; rows without a value are left out. */
export function facts(rows) {
  const kept = rows.filter(([, value]) => value !== undefined && value !== null && value !== '');
  if (!kept.length) return null;
  return el(
    'table',
    { class: 'facts' },
    el('tbody', {}, kept.map(([label, value]) => el('tr', {}, el('th', {}, label), el('td', {}, short(visible(value), 500))))),
  );
}

/** A text shown as text (never markup), hidden characters named: whole up to 20,000 characters,
 * else its start and its end with the characters between counted (what a long text ends with is
 * seen too); a line says how many hidden characters it holds. */
export function text(label, value, noun = 'text') {
  const whole = String(value ?? '');
  const hidden = hiddenCount(whole);
  const cut = whole.length > HEAD + TAIL;
  const shown = cut
    ? `${visible(whole.slice(0, HEAD))}\n⟦… characters ${HEAD + 1} to ${whole.length - TAIL} are not shown here …⟧\n${visible(whole.slice(-TAIL))}`
    : visible(whole);
  return [
    label ? el('p', { class: 'meta' }, label) : null,
    el('pre', { class: 'content' }, shown || '(empty)'),
    cut ? el('p', { class: 'meta' }, `…the ${noun} goes on (${whole.length} characters in all)`) : null,
    hidden
      ? el('p', { class: 'meta hidden-note' }, `It contains ${hidden} invisible or text-direction character${hidden === 1 ? '' : 's'}, shown as ⟦U+…⟧.`)
      : null,
  ];
}

/** What changes: one row per field, what it is now and what it becomes. */
export function changes(rows) {
  const kept = rows.filter(([, , after]) => after !== undefined);
  if (!kept.length) return el('p', { class: 'meta' }, 'No field is changed.');
  return el(
    'table',
    { class: 'changes' },
    el('thead', {}, el('tr', {}, el('th', {}, ''), el('th', {}, 'Now'), el('th', {}, 'After'))),
    el(
      'tbody',
      {},
      kept.map(([label, before, after]) =>
        el('tr', {}, el('th', {}, label), el('td', {}, shown(before)), el('td', {}, shown(after))),
      ),
    ),
  );
}

function shown(value) {
  if (value === undefined || value === null || value === '') return '(none)';
  if (Array.isArray(value)) return short(visible(value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ')), 500);
  if (typeof value === 'object') return short(visible(JSON.stringify(value)), 500);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return short(visible(value), 500);
}

/** A read tool's answer, or null when the tool is not offered or refuses (the preview then says
 * what the arguments say, and why it could not show more). */
export async function tryRead(app, tool, args, missing) {
  try {
    return await read(app, tool, args);
  } catch (error) {
    missing.push(`${tool}: ${short(error?.message ?? error, 200)}`);
    return null;
  }
}

/** "Could not read more: ..." under a preview that had to do with the arguments alone. */
export function unread(missing) {
  return missing.length ? el('p', { class: 'meta unread' }, `Could not read more: ${missing.join('; ')}`) : null;
}

export function size(bytes) {
  if (typeof bytes !== 'number') return '';
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

export function plural(count, word) {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export function baseName(path) {
  const clean = String(path ?? '').replace(/\/+$/, '');
  return clean.slice(clean.lastIndexOf('/') + 1) || '/';
}

