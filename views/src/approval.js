// The approval preview: beside the question "Delete ...?" / "Publish ...?" it shows what the action
// would remove or publish: a note's text, a folder's entries, a public link's target. The view
// gets the tool's arguments from the host and reads the target itself with this server's read
// tools (nc_notes_get_note, nc_webdav_list_directory) through the host, with the caller's own
// access: it never sees more than those tools show. A link password among the arguments is never
// drawn. When the tool's result arrives, its outcome (done, or declined) is shown on top.
import { bounded, el, read, show, start, textOf } from './common.js';

const MAX_ENTRIES = 200; // folder entries listed (the listing's total is named)

let outcome = null; // the tool's result, once it came
let preview = [el('p', { class: 'meta' }, 'Loading what this is about…')];

function redraw() {
  show(...(outcome ? [outcome] : []), ...preview);
}

function size(bytes) {
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

function short(text, limit = 300) {
  return bounded(String(text ?? ''), limit)[0];
}

function parentOf(path) {
  const clean = String(path).replace(/\/+$/, '');
  const at = clean.lastIndexOf('/');
  return [at <= 0 ? '/' : clean.slice(0, at), clean.slice(at + 1)];
}

/** "2026-11-28T00:23:03Z" as the question says it: "2026-11-28 00:23 UTC" (other text as it is). */
function stamp(iso) {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|\+00:00)$/.exec(String(iso ?? ''));
  return match ? `${match[1]} ${match[2]} UTC` : short(iso ?? '', 40);
}

function entryRow(entry) {
  return el(
    'tr',
    { class: entry.type === 'directory' ? 'entry folder' : 'entry file' },
    el('td', { class: 'name' }, `${short(entry.name)}${entry.type === 'directory' ? '/' : ''}`),
    el('td', { class: 'size' }, size(entry.size)),
    el('td', { class: 'modified' }, stamp(entry.modified)),
  );
}

async function folderOrFile(app, path) {
  try {
    const listing = await read(app, 'nc_webdav_list_directory', { path, limit: MAX_ENTRIES });
    const entries = (listing.entries ?? []).slice(0, MAX_ENTRIES);
    const total = Number(listing.total) || entries.length;
    return [
      el('p', { class: 'target' }, `The folder ${short(listing.path ?? path)} with ${total} item${total === 1 ? '' : 's'} directly inside`),
      entries.length
        ? el('table', { class: 'entries' }, el('tbody', {}, entries.map(entryRow)))
        : el('p', { class: 'empty' }, 'The folder is empty.'),
      total > entries.length ? el('p', { class: 'meta' }, `…and ${total - entries.length} more`) : null,
    ];
  } catch (error) {
    const message = String(error?.message ?? error);
    if (!/is a file/.test(message)) return [el('p', { class: 'problem' }, short(message))];
  }
  const [parent, name] = parentOf(path);
  const listing = await read(app, 'nc_webdav_list_directory', { path: parent, limit: 1000 });
  const entry = (listing.entries ?? []).find((e) => e.name === name);
  return [
    el('p', { class: 'target' }, `The file ${short(path)}`),
    entry ? el('table', { class: 'entries' }, el('tbody', {}, entryRow(entry))) : null,
  ];
}

async function note(app, args) {
  const found = await read(app, 'nc_notes_get_note', { note_id: args.note_id });
  const [text, cut] = bounded(found.content ?? '');
  return [
    el('h1', {}, 'Delete this note?'),
    el('p', { class: 'target' }, `“${short(found.title)}”`, found.category ? ` in ${short(found.category)}` : '', ` · last changed ${stamp(found.modified)}`),
    el('pre', { class: 'content' }, text || '(empty)'),
    cut ? el('p', { class: 'meta' }, `…the note goes on (${(found.content ?? '').length} characters in all)`) : null,
  ];
}

async function share(app, args) {
  const link = args.kind === 'link';
  const rights = args.rights === 'edit' ? 'can change, add and delete' : 'can read';
  const facts = [
    link ? `Anyone with the link ${rights}` : `${short(args.share_with ?? '?')} ${rights}`,
    link ? (args.password ? 'protected by a password' : 'no password') : null,
    args.expire_date ? `until ${short(args.expire_date, 40)}` : 'no end date',
  ].filter(Boolean);
  return [
    el('h1', {}, link ? 'Publish a public link?' : 'Share this?'),
    el('p', { class: 'meta' }, facts.join(' · ')),
    ...(await folderOrFile(app, args.path)),
  ];
}

async function removal(app, args) {
  const parts = await folderOrFile(app, args.path);
  // the heading names the thing: "Delete the folder /Old?" (the first part says which it is)
  const said = /^The (folder|file) (.*?)(?: with \d+ items? directly inside)?$/.exec(parts[0]?.textContent ?? '');
  const heading = said ? `Delete the ${said[1]} ${said[2]}?` : `Delete ${short(args.path)}?`;
  return [el('h1', {}, heading), ...parts];
}

function toolName(app) {
  return app.getHostContext()?.toolInfo?.tool?.name ?? '';
}

start('Nextcloud approval preview', {
  onInput: async (args, app) => {
    const name = toolName(app);
    try {
      if (name === 'nc_notes_delete_note' || 'note_id' in args) {
        preview = await note(app, args);
      } else if (name === 'nc_share_create' || 'kind' in args) {
        preview = await share(app, args);
      } else if (typeof args.path === 'string') {
        preview = await removal(app, args);
      } else {
        preview = [el('p', { class: 'problem' }, 'Nothing to preview for this tool.')];
      }
    } catch (error) {
      preview = [el('p', { class: 'problem' }, `Cannot show what this is about: ${short(error?.message ?? error)}`)];
    }
    redraw();
  },
  onResult: (result) => {
    const text = short(textOf(result), 1000);
    outcome = result?.isError
      ? el('p', { class: 'outcome declined', role: 'status' }, text || 'Not done.')
      : el('p', { class: 'outcome done', role: 'status' }, 'Done.');
    redraw();
  },
});
