// Previews of the questions that delete structure: a calendar or an address book with everything
// in it, a Deck stack with its cards, a Deck label that comes off its cards. Read with the
// toolsets' own read tools (nc_calendar_list_calendars, nc_contacts_list_address_books,
// nc_deck_get_board); what they do not show (archived cards, how many events or contacts a
// collection holds) the question itself counts.
import { el, facts, heading, named, plural, short, tryRead, unread, visible } from './kit.js';

const MAX_CARDS = 200; // cards of a stack, or carrying a label, listed by title

const ITEMS = { events: 'event', tasks: 'task', 'events and tasks': 'event and every task' };

function same(a, b) {
  return String(a ?? '').trim().toLowerCase() === String(b ?? '').trim().toLowerCase();
}

function titles(cards) {
  return cards.length
    ? el('table', { class: 'entries' }, el('tbody', {}, cards.slice(0, MAX_CARDS).map((c) => el('tr', {}, el('td', { class: 'name' }, short(visible(c.title), 120))))))
    : null;
}

async function calendarDelete(app, args) {
  const missing = [];
  const list = await tryRead(app, 'nc_calendar_list_calendars', {}, missing);
  const found = (list?.calendars ?? []).find((c) => c.id === args.calendar) ?? (list?.calendars ?? []).find((c) => c.name === args.calendar);
  const holds = found ? [found.supports_events ? 'events' : '', found.supports_tasks ? 'tasks' : ''].filter(Boolean).join(' and ') : '';
  return [
    heading(found ? `Delete the calendar ${named(found.name)}?` : `Delete calendar ${short(args.calendar, 60)}?`),
    facts([['Id', found?.id], ['Holds', holds], ['Colour', found?.color], ['Default', found?.default ? 'yes: your default calendar' : '']]),
    el('p', { class: 'meta' }, `Every ${ITEMS[holds] ?? 'entry'} in it goes with it (the question counts them). Nextcloud keeps the calendar in the Calendar app’s trash bin until that is emptied.`),
    unread(missing),
  ];
}

async function addressBookDelete(app, args) {
  const missing = [];
  const list = await tryRead(app, 'nc_contacts_list_address_books', {}, missing);
  const books = list?.address_books ?? [];
  const found = books.find((b) => b.id === args.address_book) ?? books.find((b) => b.name === args.address_book);
  return [
    heading(found ? `Delete the address book ${named(found.name)}?` : `Delete address book ${short(args.address_book, 60)}?`),
    facts([['Id', found?.id]]),
    el('p', { class: 'meta' }, 'Every contact in it goes with it (the question counts them); it cannot be restored.'),
    unread(missing),
  ];
}

async function boardOf(app, args, missing) {
  return tryRead(app, 'nc_deck_get_board', { board_id: args.board_id, cards_per_stack: MAX_CARDS }, missing);
}

async function stackDelete(app, args) {
  const missing = [];
  const board = await boardOf(app, args, missing);
  const stack = (board?.stacks ?? []).find((s) => s.id === args.stack_id);
  return [
    heading(stack ? `Delete the stack ${named(stack.title)} with ${plural(Number(stack.card_count) || 0, 'card')}?` : `Delete stack ${short(args.stack_id, 20)}?`),
    facts([['Board', board?.title]]),
    stack ? titles(stack.cards ?? []) : null,
    el('p', { class: 'meta' }, 'Its archived cards go too (the question counts them).'),
    unread(missing),
  ];
}

async function labelDelete(app, args) {
  const missing = [];
  const board = await boardOf(app, args, missing);
  const label = (board?.labels ?? []).find((l) => same(l, args.label));
  const carrying = (board?.stacks ?? []).flatMap((s) => (s.cards ?? []).filter((c) => (c.labels ?? []).some((l) => same(l, args.label))));
  return [
    heading(label ? `Delete the label ${named(label)} of the board ${named(board.title)}?` : `Delete the label ${named(args.label)}?`),
    facts([['Cards that carry it', board ? String(carrying.length) : '']]),
    titles(carrying),
    el('p', { class: 'meta' }, 'It comes off every card that carries it, archived ones too (the question counts them).'),
    unread(missing),
  ];
}

export const STRUCTURE_PREVIEWS = {
  nc_calendar_delete_calendar: calendarDelete,
  nc_contacts_delete_address_book: addressBookDelete,
  nc_deck_delete_stack: stackDelete,
  nc_deck_delete_label: labelDelete,
};
