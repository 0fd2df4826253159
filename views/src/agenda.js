// The agenda / free-slots view for nc_calendar_list_events and nc_calendar_find_availability.
// Events are grouped by day; every time is the wall-clock time written in the event itself (its
// own time zone, named once in the header, and beside an event only when its zone is another
// one), never converted to the browser's zone; days are written in the person's locale. For
// find_availability the free slots are highlighted among the busy events of the same range,
// which the view reads with nc_calendar_list_events through the host.
import { el, personLocale, problem, read, short, show, start, textOf, visible } from './common.js';

const MAX_DAYS_PER_EVENT = 62; // an all-day event is drawn on at most this many days
const MAX_DAYS = 400; // days drawn at most (the tools allow two years)

function dayKey(iso) {
  return /^\d{4}-\d{2}-\d{2}/.test(iso ?? '') ? iso.slice(0, 10) : null;
}

function clock(iso) {
  const match = /T(\d{2}:\d{2})/.exec(iso ?? '');
  return match ? match[1] : '';
}

function nextDay(key) {
  const [y, m, d] = key.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
}

function dayTitle(key) {
  const [y, m, d] = key.split('-').map(Number);
  const day = new Date(Date.UTC(y, m - 1, d));
  try {
    return day.toLocaleDateString(personLocale(), { weekday: 'long', day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
  } catch {
    return key;
  }
}

/** Days (YYYY-MM-DD) an event is drawn on, inside the asked range when known. */
function daysOf(event, range) {
  const first = dayKey(event.start);
  if (!first) return [];
  if (!event.all_day) return [first];
  const last = dayKey(event.end) ?? first;
  const days = [];
  for (let key = first; key <= last && days.length < MAX_DAYS_PER_EVENT; key = nextDay(key)) {
    if ((!range.from || key >= range.from) && (!range.until || key < range.until)) days.push(key);
  }
  return days.length ? days : [first];
}

function eventItem(event, headerZone) {
  const own = event.timezone ?? 'floating time';
  const start = clock(event.start);
  const end = clock(event.end);
  const endDay = dayKey(event.end);
  const spans = !event.all_day && endDay && endDay !== dayKey(event.start);
  const when = event.all_day ? 'all day' : `${start}–${spans ? `${endDay} ` : ''}${end}`;
  return el(
    'li',
    { class: event.status === 'CANCELLED' ? 'event cancelled' : 'event', 'data-uid': short(event.uid, 200) },
    el('span', { class: 'when' }, when),
    el('span', { class: 'what' }, short(visible(event.summary)) || '(no title)'),
    event.location ? el('span', { class: 'where' }, short(visible(event.location))) : null,
    !event.all_day && own !== headerZone ? el('span', { class: 'zone' }, own) : null,
  );
}

function slotItem(slot) {
  return el(
    'li',
    { class: 'slot' },
    el('span', { class: 'when' }, `${clock(slot.start)}–${clock(slot.end)}`),
    el('span', { class: 'what' }, `Free (${Number(slot.minutes) || 0} min)`),
  );
}

function render({ title, events, slots, zoneLine, notes, range }) {
  const days = new Map();
  const put = (key, kind, item) => {
    if (!days.has(key)) days.set(key, []);
    days.get(key).push([kind, item]);
  };
  // the zone is named once, in the header: the one most events share (or the one asked about);
  // a row names its zone only when it is another one
  const counted = new Map();
  for (const e of events.filter((e) => !e.all_day)) {
    const zone = e.timezone ?? 'floating time';
    counted.set(zone, (counted.get(zone) ?? 0) + 1);
  }
  const common = [...counted.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
  const zone = zoneLine ?? common;
  for (const event of events) for (const key of daysOf(event, range)) put(key, 'event', event);
  for (const slot of slots ?? []) {
    const key = dayKey(slot.start);
    if (key) put(key, 'slot', slot);
  }
  const keys = [...days.keys()].sort().slice(0, MAX_DAYS);
  const sections = keys.map((key) => {
    const items = days.get(key).sort(([, a], [, b]) => {
      const left = a.all_day ? '' : clock(a.start);
      const right = b.all_day ? '' : clock(b.start);
      return left < right ? -1 : left > right ? 1 : 0;
    });
    return el(
      'section',
      { class: 'day', 'data-date': key },
      el('h2', {}, dayTitle(key)),
      el('ul', {}, items.map(([kind, item]) => (kind === 'slot' ? slotItem(item) : eventItem(item, zone)))),
    );
  });
  const counts = [`${events.length} event${events.length === 1 ? '' : 's'}`];
  if (slots) counts.unshift(`${slots.length} free slot${slots.length === 1 ? '' : 's'}`);
  show(
    el('header', {}, el('h1', {}, title), el('p', { class: 'meta' }, counts.join(' · '), zone ? ` · times in ${zone}` : '')),
    sections.length ? el('div', { class: 'days' }, sections) : el('p', { class: 'empty' }, emptyWords(slots, range)),
    notes.length ? el('ul', { class: 'notes' }, notes.slice(0, 20).map((n) => el('li', {}, short(n)))) : null,
  );
}

/** "No events from Monday, December 7, 2026 to Sunday, December 13, 2026." (the range named;
 * `until` is the day after the last one asked about) */
function emptyWords(slots, range) {
  const what = slots ? 'No free time' : 'No events';
  const last = range?.until ? previousDay(range.until) : null;
  if (range?.from && last && last > range.from) return `${what} from ${dayTitle(range.from)} to ${dayTitle(last)}.`;
  if (range?.from) return `${what} on ${dayTitle(range.from)}.`;
  return `${what} in this range.`;
}

function previousDay(key) {
  const [y, m, d] = key.split('-').map(Number);
  return new Date(Date.UTC(y, m - 1, d - 1)).toISOString().slice(0, 10);
}

function rangeOf(args) {
  return { from: dayKey(args.start), until: dayKey(args.end) };
}

start('Nextcloud agenda', {
  onResult: async (result, args, app) => {
    const data = result?.structuredContent;
    if (result?.isError || !data) {
      problem(textOf(result) || 'The calendar gave no answer.');
      return;
    }
    const range = rangeOf(args);
    const notes = Array.isArray(data.notes) ? data.notes.map(String) : [];
    if (Array.isArray(data.slots)) {
      let events = [];
      try {
        const wanted = Array.isArray(args.calendars) ? args.calendars : null;
        const found = await read(app, 'nc_calendar_list_events', {
          start: args.start,
          end: args.end,
          ...(data.timezone ? { timezone: data.timezone } : {}),
          ...(wanted?.length === 1 ? { calendar: wanted[0] } : {}),
          limit: 1000,
        });
        events = (found.events ?? []).filter((e) => !wanted || wanted.includes(e.calendar));
      } catch (error) {
        notes.push(`The busy events could not be read: ${short(error?.message ?? error)}`);
      }
      render({ title: 'Free time', events, slots: data.slots, zoneLine: data.timezone, notes, range });
      return;
    }
    if (data.truncated) notes.unshift('More events matched than were returned (the limit).');
    render({ title: 'Agenda', events: Array.isArray(data.events) ? data.events : [], notes, range });
  },
});
