// Previews of the questions of the app toolsets: Deck (delete a card or a board, change or move a
// card, publish a comment), Talk (post), Tables (delete or change a row), Collectives (replace a page's text,
// move a page to the trash).
// Read with the toolsets' own read tools; where a tool takes only an id (a Deck comment's card,
// a Tables row), the view looks for it among a bounded number of boards or tables.
import { changes, el, facts, heading, localTime, named, plural, short, text, tryRead, unread, visible } from './kit.js';

const MAX_SEARCHED = 10; // boards or tables looked through for a card or row named by id alone
const MAX_PAGES = 3; // pages of 100 rows read per table while looking for a row

async function cardOf(app, args, missing) {
  return tryRead(app, 'nc_deck_get_card', { board_id: args.board_id, stack_id: args.stack_id, card_id: args.card_id, comments: 0 }, missing);
}

async function cardDelete(app, args) {
  const missing = [];
  const card = await cardOf(app, args, missing);
  const board = card ? await tryRead(app, 'nc_deck_get_board', { board_id: args.board_id, cards_per_stack: 0 }, missing) : null;
  const stack = (board?.stacks ?? []).find((s) => s.id === args.stack_id);
  return [
    heading(card ? `Delete the card ${named(card.title)}?` : `Delete card ${short(args.card_id, 20)}?`),
    facts([
      ['Board', board?.title],
      ['List', stack?.title],
      ['Due', card?.due ? localTime(card.due) : ''],
      ['Labels', (card?.labels ?? []).join(', ')],
      ['Assigned', (card?.assigned ?? []).join(', ')],
      ['Comments', card ? String(card.comment_count ?? 0) : ''],
    ]),
    card?.description ? text('Description', card.description) : null,
    unread(missing),
  ];
}

async function boardDelete(app, args) {
  const missing = [];
  const board = await tryRead(app, 'nc_deck_get_board', { board_id: args.board_id, cards_per_stack: 0 }, missing);
  const stacks = board?.stacks ?? [];
  const cards = stacks.reduce((sum, s) => sum + (Number(s.card_count) || 0), 0);
  return [
    heading(board ? `Delete the board ${named(board.title)} with ${plural(cards, 'card')}?` : `Delete board ${short(args.board_id, 20)}?`),
    board ? facts([['Owner', board.owner], ['Members', (board.members ?? []).join(', ')]]) : null,
    stacks.length
      ? el(
          'table',
          { class: 'entries' },
          el('tbody', {}, stacks.map((s) => el('tr', {}, el('td', { class: 'name' }, short(visible(s.title), 120)), el('td', { class: 'size' }, plural(Number(s.card_count) || 0, 'card'))))),
        )
      : null,
    unread(missing),
  ];
}

/** The names a card has after adding and removing some (matched without regard to case, as the
 * server matches a board's labels). */
function afterNames(now, add, remove) {
  const gone = new Set((remove ?? []).map((n) => String(n).toLowerCase()));
  const kept = (now ?? []).filter((n) => !gone.has(String(n).toLowerCase()));
  const have = new Set(kept.map((n) => String(n).toLowerCase()));
  return [...kept, ...(add ?? []).filter((n) => !have.has(String(n).toLowerCase()))];
}

function changedNames(now, add, remove) {
  return (add ?? []).length || (remove ?? []).length ? afterNames(now, add, remove) : undefined;
}

async function cardUpdate(app, args) {
  const missing = [];
  const card = await cardOf(app, args, missing);
  const board = card ? await tryRead(app, 'nc_deck_get_board', { board_id: args.board_id, cards_per_stack: 0 }, missing) : null;
  const stack = (board?.stacks ?? []).find((s) => s.id === args.stack_id);
  const due = args.due === undefined || args.due === null ? undefined : args.due === '' ? '' : localTime(args.due);
  return [
    heading(card ? `Change the card ${named(card.title)}?` : `Change card ${short(args.card_id, 20)}?`),
    facts([['Board', board?.title], ['List', stack?.title]]),
    changes([
      ['Title', card?.title, args.title ?? undefined],
      ['Done', card?.done, args.done ?? undefined],
      ['Due', card?.due ? localTime(card.due) : '', due],
      ['Labels', card?.labels, changedNames(card?.labels, args.add_labels, args.remove_labels)],
      ['Assigned', card?.assigned, changedNames(card?.assigned, args.assign, args.unassign)],
    ]),
    ...(typeof args.description === 'string'
      ? [...(card ? text('Its description now', card.description, 'description') : []), ...text('Its description after', args.description, 'description')]
      : []),
    ...(card?.notes ?? []).map((note) => el('p', { class: 'meta' }, short(note, 200))),
    unread(missing),
  ];
}

async function cardMove(app, args) {
  const missing = [];
  const card = await cardOf(app, args, missing);
  const source = await tryRead(app, 'nc_deck_get_board', { board_id: args.board_id, cards_per_stack: 0 }, missing);
  const across = args.to_board_id !== undefined && args.to_board_id !== null && args.to_board_id !== args.board_id;
  const target = across ? await tryRead(app, 'nc_deck_get_board', { board_id: args.to_board_id, cards_per_stack: 0 }, missing) : source;
  const from = (source?.stacks ?? []).find((s) => s.id === args.stack_id);
  const to = (target?.stacks ?? []).find((s) => s.id === args.to_stack_id);
  const place = (board, stack, id) => `${board ? short(visible(board.title), 80) : `board ${short(id, 20)}`} › ${stack ? short(visible(stack.title), 80) : `list ${short(id === args.board_id ? args.stack_id : args.to_stack_id, 20)}`}`;
  const before = new Set(source?.members ?? []);
  const newly = across && source && target ? (target.members ?? []).filter((m) => !before.has(m)) : [];
  const thing = card ? `the card ${named(card.title)}` : `card ${short(args.card_id, 20)}`;
  return [
    heading(across ? `Move ${thing} to the board ${target ? named(target.title) : short(args.to_board_id, 20)}?` : `Move ${thing} to ${to ? named(to.title) : `list ${short(args.to_stack_id, 20)}`}?`),
    facts([
      ['From', place(source, from, args.board_id)],
      ['To', place(target, to, across ? args.to_board_id : args.board_id)],
      ['Position', args.position ? `${short(args.position, 10)} from the top` : 'the top'],
      ['Newly read by', across && source && target ? newly.join(', ') || 'no one who cannot read it now (groups and teams: see the question)' : ''],
    ]),
    across && card ? text('What the board’s readers will see', `${card.title}\n\n${card.description ?? ''}`.trim(), 'card') : null,
    unread(missing),
  ];
}

/** A card named by its id alone: looked for on the first boards (its title and board's). */
async function findCard(app, cardId, missing) {
  const boards = await tryRead(app, 'nc_deck_list_boards', { limit: MAX_SEARCHED }, missing);
  for (const summary of (boards?.boards ?? []).slice(0, MAX_SEARCHED)) {
    const board = await tryRead(app, 'nc_deck_get_board', { board_id: summary.id, cards_per_stack: 200 }, []);
    for (const stack of board?.stacks ?? []) {
      const card = (stack.cards ?? []).find((c) => c.id === cardId);
      if (card) return { card, board: board.title, stack: stack.title };
    }
  }
  return null;
}

async function deckComment(app, args) {
  const missing = [];
  const found = await findCard(app, args.card_id, missing);
  return [
    heading(found ? `Comment on the card ${named(found.card.title)}?` : `Comment on card ${short(args.card_id, 20)}?`),
    found ? facts([['Board', found.board], ['List', found.stack]]) : null,
    ...text('The comment, as the board’s members will see it', args.message),
    unread(missing),
  ];
}

async function talkPost(app, args) {
  const missing = [];
  const list = await tryRead(app, 'nc_talk_list_conversations', { limit: 200 }, missing);
  const room = (list?.conversations ?? []).find((c) => c.token === args.token);
  return [
    heading(room ? `Post in ${named(room.name)}?` : 'Post in this conversation?'),
    room ? facts([['Kind', room.kind], ['Last active', localTime(room.last_activity)]]) : null,
    args.reply_to ? el('p', { class: 'meta' }, `A reply to message ${short(args.reply_to, 20)}`) : null,
    ...text('The message, as everyone in the conversation will see it', args.text),
    unread(missing),
  ];
}

/** A row named by its id alone: looked for in the first tables, a few pages each. */
async function findRow(app, rowId, missing) {
  const tables = await tryRead(app, 'nc_tables_list_tables', { limit: MAX_SEARCHED }, missing);
  for (const table of (tables?.tables ?? []).slice(0, MAX_SEARCHED)) {
    for (let page = 0; page < MAX_PAGES; page += 1) {
      const rows = await tryRead(app, 'nc_tables_read_rows', { table_id: table.id, limit: 100, offset: page * 100 }, []);
      const row = (rows?.rows ?? []).find((r) => r.id === rowId);
      if (row) return { row, table: table.title };
      if (!rows || rows.next_offset === null || rows.next_offset === undefined) break;
    }
  }
  return null;
}

function cells(values) {
  return facts(Object.entries(values ?? {}).slice(0, 50).map(([k, v]) => [k, v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v)]));
}

async function rowDelete(app, args) {
  const missing = [];
  const found = await findRow(app, args.row_id, missing);
  return [
    heading(found ? `Delete row ${short(args.row_id, 20)} of the table ${named(found.table)}?` : `Delete table row ${short(args.row_id, 20)}?`),
    found ? cells(found.row.values) : null,
    el('p', { class: 'meta' }, 'Tables keeps no trash: the row cannot be restored.'),
    unread(missing),
  ];
}

async function rowUpdate(app, args) {
  const missing = [];
  const found = await findRow(app, args.row_id, missing);
  const now = found?.row.values ?? {};
  return [
    heading(found ? `Change row ${short(args.row_id, 20)} of the table ${named(found.table)}?` : `Change table row ${short(args.row_id, 20)}?`),
    changes(Object.entries(args.values ?? {}).slice(0, 50).map(([k, v]) => [k, now[k], v])),
    unread(missing),
  ];
}

async function pageEdit(app, args) {
  const missing = [];
  const page = await tryRead(app, 'nc_collectives_get_page', { collective_id: args.collective_id, page_id: args.page_id }, missing);
  return [
    heading(page ? `Replace the text of the page ${named(page.title)}?` : `Replace the text of page ${short(args.page_id, 20)}?`),
    page ? facts([['Last changed', localTime(page.modified)]]) : null,
    ...(page ? text('Its text now', page.content) : []),
    ...text('Its text after', args.content),
    unread(missing),
  ];
}

const MAX_SUBPAGES = 200; // subpages of a trashed page listed (the total is named)

async function pageTrash(app, args) {
  const missing = [];
  const tree = await tryRead(app, 'nc_collectives_list_pages', { collective_id: args.collective_id, under: args.page_id, limit: MAX_SUBPAGES + 1 }, missing);
  const [page, ...below] = tree?.pages ?? [];
  const count = Math.max((tree?.total ?? 0) - 1, 0);
  return [
    heading(page ? `Move the page ${named(page.title)}${count ? ` and its ${plural(count, 'subpage')}` : ''} to the trash?` : `Move page ${short(args.page_id, 20)} to the trash?`),
    page ? facts([['Last changed', localTime(page.modified)]]) : null,
    below.length
      ? el(
          'table',
          { class: 'entries' },
          el('tbody', {}, below.slice(0, MAX_SUBPAGES).map((p) => el('tr', { class: 'entry' }, el('td', { class: 'name' }, `${'\u2003'.repeat(Math.min(Math.max(p.depth - page.depth - 1, 0), 10))}${short(visible(p.title), 120)}`), el('td', { class: 'modified' }, localTime(p.modified))))),
        )
      : null,
    count > MAX_SUBPAGES ? el('p', { class: 'meta' }, `…and ${count - MAX_SUBPAGES} more`) : null,
    el('p', { class: 'meta' }, 'Every member of the collective loses it until it is restored from the trash.'),
    unread(missing),
  ];
}

export const APP_PREVIEWS = {
  nc_deck_delete_card: cardDelete,
  nc_deck_delete_board: boardDelete,
  nc_deck_update_card: cardUpdate,
  nc_deck_move_card: cardMove,
  nc_deck_add_comment: deckComment,
  nc_talk_post_message: talkPost,
  nc_tables_delete_row: rowDelete,
  nc_tables_update_row: rowUpdate,
  nc_collectives_edit_page: pageEdit,
  nc_collectives_trash_page: pageTrash,
};
