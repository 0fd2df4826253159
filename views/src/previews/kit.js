// The pieces every approval preview is built from: a heading that names the thing, facts as
// label/value rows, a text shown as text, a before/after table for changes, and reads through the
// host that fall back to what the arguments say when the read tool is not there or fails.
import { bounded, el, localSpan, localTime, read, short } from '../common.js';

export { el, localSpan, localTime, short };

/** 'Projects' as a heading says it: quoted, cut to 80 characters. */
export function named(text) {
  return `'${short(text, 80)}'`;
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
    el('tbody', {}, kept.map(([label, value]) => el('tr', {}, el('th', {}, label), el('td', {}, short(value, 500))))),
  );
}

/** A text shown as text (never markup), at most 20,000 characters, said when cut. */
export function text(label, value, noun = 'text') {
  const whole = String(value ?? '');
  const [shown, cut] = bounded(whole);
  return [
    label ? el('p', { class: 'meta' }, label) : null,
    el('pre', { class: 'content' }, shown || '(empty)'),
    cut ? el('p', { class: 'meta' }, `…the ${noun} goes on (${whole.length} characters in all)`) : null,
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
  if (Array.isArray(value)) return short(value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', '), 500);
  if (typeof value === 'object') return short(JSON.stringify(value), 500);
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  return short(value, 500);
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

