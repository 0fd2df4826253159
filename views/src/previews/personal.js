// Previews of the questions about notes, events, tasks and contacts: delete one, or change it
// (what each changed field is now and becomes). The item is read with the toolsets' own read
// tools (nc_notes_get_note, nc_calendar_get_event, nc_calendar_list_todos, nc_contacts_get_contact).
import { changes, el, facts, heading, localSpan, localTime, named, short, text, tryRead, unread } from './kit.js';

async function noteOf(app, args, missing) {
  return tryRead(app, 'nc_notes_get_note', { note_id: args.note_id }, missing);
}

async function noteDelete(app, args) {
  const missing = [];
  const note = await noteOf(app, args, missing);
  if (!note) return [heading(`Delete note ${short(args.note_id, 20)}?`), unread(missing)];
  return [
    heading(`Delete the note ${named(note.title)}?`),
    facts([['Category', note.category], ['Last changed', localTime(note.modified)]]),
    ...text('', note.content, 'note'),
  ];
}

async function noteUpdate(app, args) {
  const missing = [];
  const note = await noteOf(app, args, missing);
  return [
    heading(note ? `Change the note ${named(note.title)}?` : `Change note ${short(args.note_id, 20)}?`),
    changes([
      ['Title', note?.title, args.title],
      ['Category', note?.category, args.category],
    ]),
    ...(typeof args.content === 'string' ? [...text('Its text now', note?.content), ...text('Its text after', args.content)] : []),
    unread(missing),
  ];
}

function span(event) {
  if (!event) return '';
  if (event.all_day) {
    const first = localTime(event.start);
    const last = localTime(event.end);
    return first === last ? `${first}, all day` : `${first} – ${last}, all day`;
  }
  return localSpan(event.start, event.end);
}

async function eventOf(app, args, missing) {
  return tryRead(app, 'nc_calendar_get_event', { calendar: args.calendar, uid: args.uid }, missing);
}

async function eventDelete(app, args) {
  const missing = [];
  const event = await eventOf(app, args, missing);
  return [
    heading(event ? `Delete the event ${named(event.summary || '(no title)')}?` : 'Delete this event?'),
    facts([
      ['When', span(event)],
      ['Repeats', event?.recurrence ? `yes (${short(event.recurrence, 120)}): every occurrence goes` : ''],
      ['Where', event?.location],
      ['Calendar', event?.calendar ?? args.calendar],
      ['Attendees', (event?.attendees ?? []).map((a) => a.name || a.email).join(', ')],
    ]),
    event?.description ? text('Description', event.description) : null,
    unread(missing),
  ];
}

const EVENT_FIELDS = [
  ['Title', 'summary'],
  ['Starts', 'start', localTime],
  ['Ends', 'end', localTime],
  ['All day', 'all_day'],
  ['Where', 'location'],
  ['Description', 'description'],
  ['Repeats', 'recurrence'],
  ['Reminders (minutes before)', 'reminders'],
  ['Attendees', 'attendees'],
  ['Status', 'status'],
];

function fieldChanges(fields, now, args) {
  return changes(
    fields.map(([label, key, format]) => {
      const after = args[key];
      const before = now?.[key];
      return [label, format && before ? format(before) : before, after !== undefined && format && after ? format(after) : after];
    }),
  );
}

async function eventUpdate(app, args) {
  const missing = [];
  const event = await eventOf(app, args, missing);
  return [
    heading(event ? `Change the event ${named(event.summary || '(no title)')}?` : 'Change this event?'),
    facts([['When now', span(event)], ['Calendar', event?.calendar ?? args.calendar]]),
    fieldChanges(EVENT_FIELDS, event, args),
    unread(missing),
  ];
}

async function todoOf(app, args, missing) {
  const list = await tryRead(app, 'nc_calendar_list_todos', { calendar: args.calendar, status: 'all', limit: 1000 }, missing);
  const found = (list?.todos ?? []).find((t) => t.uid === args.uid) ?? null;
  if (list && !found) missing.push(`no task ${short(args.uid, 80)} among the first ${list.todos?.length ?? 0}`);
  return found;
}

async function todoDelete(app, args) {
  const missing = [];
  const todo = await todoOf(app, args, missing);
  return [
    heading(todo ? `Delete the task ${named(todo.summary || '(no title)')}?` : 'Delete this task?'),
    facts([
      ['Due', todo?.due ? localTime(todo.due) : ''],
      ['State', todo ? (todo.completed ? 'done' : 'open') : ''],
      ['Categories', (todo?.categories ?? []).filter(Boolean).join(', ')],
      ['List', todo?.calendar ?? args.calendar],
    ]),
    todo?.description ? text('Description', todo.description) : null,
    unread(missing),
  ];
}

const TODO_FIELDS = [
  ['Title', 'summary'],
  ['Done', 'completed'],
  ['Due', 'due', localTime],
  ['Description', 'description'],
  ['Priority', 'priority'],
  ['Per cent done', 'percent_complete'],
  ['Categories', 'categories'],
];

async function todoUpdate(app, args) {
  const missing = [];
  const todo = await todoOf(app, args, missing);
  return [
    heading(todo ? `Change the task ${named(todo.summary || '(no title)')}?` : 'Change this task?'),
    fieldChanges(TODO_FIELDS, todo, args),
    unread(missing),
  ];
}

async function contactOf(app, args, missing) {
  const wanted = { uid: args.uid, ...(args.address_book ? { address_book: args.address_book } : {}) };
  return tryRead(app, 'nc_contacts_get_contact', wanted, missing);
}

const labeled = (list) => (list ?? []).map((item) => (typeof item === 'object' ? item.value ?? '' : String(item))).join(', ');

async function contactDelete(app, args) {
  const missing = [];
  const contact = await contactOf(app, args, missing);
  return [
    heading(contact ? `Delete the contact ${named(contact.full_name || '(no name)')}?` : 'Delete this contact?'),
    contact
      ? facts([
          ['Email', labeled(contact.emails)],
          ['Phone', labeled(contact.phones)],
          ['Organisation', contact.organisation],
          ['Groups', (contact.groups ?? []).join(', ')],
          ['Address book', contact.address_book],
        ])
      : null,
    unread(missing),
  ];
}

const CONTACT_FIELDS = [
  ['Name', 'full_name'],
  ['Given name', 'given_name'],
  ['Family name', 'family_name'],
  ['Email', 'emails', labeled],
  ['Phone', 'phones', labeled],
  ['Organisation', 'organisation'],
  ['Job title', 'title'],
  ['Groups', 'groups'],
  ['Note', 'note'],
  ['Birthday', 'birthday', localTime],
];

async function contactUpdate(app, args) {
  const missing = [];
  const contact = await contactOf(app, args, missing);
  return [
    heading(contact ? `Change the contact ${named(contact.full_name || '(no name)')}?` : 'Change this contact?'),
    fieldChanges(CONTACT_FIELDS, contact, args),
    unread(missing),
  ];
}

export const PERSONAL_PREVIEWS = {
  nc_notes_delete_note: noteDelete,
  nc_notes_update_note: noteUpdate,
  nc_calendar_delete_event: eventDelete,
  nc_calendar_update_event: eventUpdate,
  nc_calendar_delete_todo: todoDelete,
  nc_calendar_update_todo: todoUpdate,
  nc_contacts_delete_contact: contactDelete,
  nc_contacts_update_contact: contactUpdate,
};
