// Previews of the questions about files: delete, overwrite (write, move, copy), share, change or
// remove a share, restore a version, empty the trash, comment on a file, create a tag. What is
// there now is read with nc_webdav_list_directory (and the toolsets' own list tools).
import { baseName, changes, el, facts, heading, localTime, named, plural, short, size, text, tryRead, unread, visible } from './kit.js';

const MAX_ENTRIES = 200; // folder entries listed (the listing's total is named)

function entryRow(entry) {
  return el(
    'tr',
    { class: entry.type === 'directory' ? 'entry folder' : 'entry file' },
    el('td', { class: 'name' }, `${short(visible(entry.name))}${entry.type === 'directory' ? '/' : ''}`),
    el('td', { class: 'size' }, size(entry.size)),
    el('td', { class: 'modified' }, localTime(entry.modified)),
  );
}

/** What is at `path`: {kind: 'folder' | 'file' | null, name, nodes}. */
export async function target(app, path, missing) {
  const listing = await tryRead(app, 'nc_webdav_list_directory', { path, limit: MAX_ENTRIES }, []);
  const name = baseName(path);
  if (listing) {
    const entries = (listing.entries ?? []).slice(0, MAX_ENTRIES);
    const total = Number(listing.total) || entries.length;
    return {
      kind: 'folder',
      name,
      nodes: [
        el('p', { class: 'target' }, `The folder ${short(visible(listing.path ?? path))} with ${plural(total, 'item')} directly inside`),
        entries.length
          ? el('table', { class: 'entries' }, el('tbody', {}, entries.map(entryRow)))
          : el('p', { class: 'empty' }, 'The folder is empty.'),
        total > entries.length ? el('p', { class: 'meta' }, `…and ${total - entries.length} more`) : null,
      ],
    };
  }
  const clean = String(path).replace(/\/+$/, '');
  const parent = clean.slice(0, Math.max(clean.lastIndexOf('/'), 0)) || '/';
  const around = await tryRead(app, 'nc_webdav_list_directory', { path: parent, limit: 1000 }, missing);
  const entry = (around?.entries ?? []).find((e) => e.name === name);
  if (!entry) return { kind: null, name, nodes: [el('p', { class: 'target' }, short(visible(path)))] };
  return {
    kind: entry.type === 'directory' ? 'folder' : 'file',
    name,
    nodes: [el('p', { class: 'target' }, `The file ${short(visible(path))}`), el('table', { class: 'entries' }, el('tbody', {}, entryRow(entry)))],
  };
}

const thing = (found) => (found.kind ? `the ${found.kind} ${named(found.name)}` : named(found.name));

async function remove(app, args) {
  const missing = [];
  const found = await target(app, args.path, missing);
  return [heading(`Delete ${thing(found)}?`), ...found.nodes, unread(missing)];
}

async function write(app, args) {
  const missing = [];
  const found = await target(app, args.path, missing);
  const binary = args.encoding === 'base64';
  return [
    heading(`Replace ${thing(found)}?`),
    ...found.nodes,
    binary ? el('p', { class: 'meta' }, 'New content: binary data') : text('New content', args.content),
    unread(missing),
  ];
}

function transfer(verb) {
  return async (app, args) => {
    const missing = [];
    const found = await target(app, args.destination, missing);
    return [
      heading(`${verb} ${named(baseName(args.source))} over ${thing(found)}?`),
      facts([['From', args.source], ['To', args.destination]]),
      el('p', { class: 'meta' }, 'What is there now, and would be replaced:'),
      ...found.nodes,
      unread(missing),
    ];
  };
}

const RIGHTS = { edit: 'can change, add and delete', read: 'can read' };

async function share(app, args) {
  const missing = [];
  const found = await target(app, args.path, missing);
  const link = args.kind === 'link';
  const who = link ? 'a public link' : short(visible(args.share_with ?? '?'), 80);
  return [
    heading(`Share ${thing(found)} with ${who}?`),
    facts([
      ['Who', link ? 'Anyone with the link' : who],
      ['Rights', RIGHTS[args.rights] ?? RIGHTS.read],
      ['Password', link ? (args.password ? 'set' : 'none') : ''], // the password itself is never drawn
      ['Until', args.expire_date ? localTime(args.expire_date) : 'no end date'],
      ['Note', args.note],
    ]),
    ...found.nodes,
    unread(missing),
  ];
}

async function shareOf(app, id, missing) {
  const mine = await tryRead(app, 'nc_share_list', {}, missing);
  return (mine?.shares ?? []).find((s) => String(s.id) === String(id)) ?? null;
}

function whom(found) {
  if (!found) return 'someone';
  return found.kind === 'link' ? 'a public link' : short(visible(found.share_with_name || found.share_with || found.kind), 80);
}

async function shareUpdate(app, args) {
  const missing = [];
  const found = await shareOf(app, args.share_id, missing);
  const name = found ? named(baseName(found.path)) : `share ${short(args.share_id, 40)}`;
  return [
    heading(`Change the share of ${name} with ${whom(found)}?`),
    changes([
      ['Rights', found?.rights, args.rights ? RIGHTS[args.rights] ?? args.rights : undefined],
      ['Password', found ? (found.has_password ? 'set' : 'none') : undefined, args.password === undefined ? undefined : args.password ? 'a new one' : 'none'],
      ['Until', found?.expires ? localTime(found.expires) : 'no end date', args.expire_date === undefined ? undefined : args.expire_date ? localTime(args.expire_date) : 'no end date'],
      ['Note', found?.note, args.note],
    ]),
    unread(missing),
  ];
}

async function shareDelete(app, args) {
  const missing = [];
  const found = await shareOf(app, args.share_id, missing);
  const name = found ? named(baseName(found.path)) : `share ${short(args.share_id, 40)}`;
  return [
    heading(`Stop sharing ${name} with ${whom(found)}?`),
    found ? facts([['Path', found.path], ['Rights', (found.rights ?? []).join(', ')], ['Link', found.url]]) : null,
    unread(missing),
  ];
}

async function restore(app, args) {
  const missing = [];
  const found = await target(app, args.path, missing);
  const list = await tryRead(app, 'nc_versions_list', { path: args.path, limit: 200 }, missing);
  const version = (list?.versions ?? []).find((v) => String(v.version) === String(args.version));
  return [
    heading(`Restore an older version of ${thing(found)}?`),
    facts([
      ['Version of', version ? localTime(version.modified) : short(args.version, 40)],
      ['Its size', version ? size(version.size) : ''],
      ['By', version?.author],
      ['Label', version?.label],
    ]),
    el('p', { class: 'meta' }, 'The current content, which the version replaces:'),
    ...found.nodes,
    unread(missing),
  ];
}

async function emptyTrash(app) {
  const missing = [];
  const listing = await tryRead(app, 'nc_trash_list', { limit: MAX_ENTRIES }, missing);
  const items = listing?.items ?? [];
  const total = Number(listing?.total) || items.length;
  return [
    heading(listing ? `Empty the trash: delete ${plural(total, 'item')} for good?` : 'Empty the trash for good?'),
    listing ? el('p', { class: 'meta' }, `${size(listing.total_size)} in all`) : null,
    items.length
      ? el(
          'table',
          { class: 'entries' },
          el('tbody', {}, items.map((item) => entryRow({ name: item.original_path, type: item.type, size: item.size, modified: item.deleted }))),
        )
      : null,
    total > items.length ? el('p', { class: 'meta' }, `…and ${total - items.length} more`) : null,
    unread(missing),
  ];
}

async function comment(app, args) {
  return [heading(`Comment on ${named(baseName(args.path))}?`), facts([['File', args.path]]), ...text('The comment, as others will see it', args.message)];
}

async function tag(app, args) {
  return [
    heading(`Create the tag ${named(args.tag)} and put it on ${named(baseName(args.path))}?`),
    facts([['File', args.path], ['Tag', args.tag]]),
    el('p', { class: 'meta' }, 'Every user of this Nextcloud sees the name of a new tag.'),
  ];
}

export const FILE_PREVIEWS = {
  nc_webdav_delete_resource: remove,
  nc_webdav_write_file: write,
  nc_webdav_move_resource: transfer('Move'),
  nc_webdav_copy_resource: transfer('Copy'),
  nc_share_create: share,
  nc_share_update: shareUpdate,
  nc_share_delete: shareDelete,
  nc_versions_restore: restore,
  nc_trash_empty: emptyTrash,
  nc_comments_add: comment,
  nc_tags_assign: tag,
};
