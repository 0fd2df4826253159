// Previews of the questions about what others receive or see, and what the person is told: send an
// email (its sender, recipients, subject and body exactly as the server sends them), set the
// status message others see, dismiss notifications (each one that goes).
import { changes, el, facts, heading, localTime, named, plural, short, text, tryRead, unread, visible } from './kit.js';

/** Addresses as the server sends to them: trimmed, each once (without regard to case). */
function addresses(list) {
  const out = [];
  for (const value of list ?? []) {
    const email = String(value).trim();
    if (!out.some((seen) => seen.toLowerCase() === email.toLowerCase())) out.push(email);
  }
  return out;
}

async function mailSend(app, args) {
  const missing = [];
  const list = await tryRead(app, 'nc_mail_list_mailboxes', {}, missing);
  const accounts = list?.accounts ?? [];
  const account = args.account_id ? accounts.find((a) => a.id === args.account_id) : accounts[0];
  if (list && !account) missing.push(args.account_id ? `no mail account ${short(args.account_id, 20)}` : 'no mail account');
  const to = addresses(args.to);
  const cc = addresses(args.cc);
  const subject = String(args.subject ?? '').trim();
  const others = to.length + cc.length - 1;
  return [
    heading(`Send the email ${named(subject || '(no subject)')} to ${short(visible(to[0] ?? '(nobody)'), 80)}${others > 0 ? ` and ${plural(others, 'other')}` : ''}?`),
    facts([
      ['From', account ? (account.name && account.name !== account.email ? `${account.name} <${account.email}>` : account.email) : ''],
      ['To', to.join(', ')],
      ['Cc', cc.join(', ')],
      ['Subject', subject],
      ['Replaces', args.draft_id ? `draft ${short(args.draft_id, 20)} (removed)` : ''],
    ]),
    ...text('The email, as it will be sent (plain text)', args.body, 'email'),
    el('p', { class: 'meta' }, 'A sent email cannot be taken back.'),
    unread(missing),
  ];
}

const STATUS = { online: 'Online', away: 'Away', dnd: 'Do not disturb', invisible: 'Invisible', offline: 'Offline' };
const statusName = (value) => (value ? STATUS[value] ?? short(value, 20) : value);

async function statusSet(app, args) {
  const missing = [];
  const now = await tryRead(app, 'nc_status_get', {}, missing);
  // the message as it will be shown: one line, spaces collapsed (as the server writes it)
  const message = typeof args.message === 'string' ? args.message.split(/\s+/).filter(Boolean).join(' ') : undefined;
  const shown = message ? `${args.icon ? `${args.icon} ` : ''}${message}` : '';
  const title = message
    ? `Show the status message ${named(shown)} to others?`
    : message === ''
      ? 'Clear your status message?'
      : `Set your status to ${named(statusName(args.status))}?`;
  return [
    heading(title),
    message ? facts([['Seen by', 'every user of this Nextcloud who can see you (in Talk, Files, the contacts menu)']]) : null,
    changes([
      ['Status', statusName(now?.status), statusName(args.status ?? undefined)],
      ['Message', now ? [now.icon, now.message].filter(Boolean).join(' ') : undefined, message === undefined ? undefined : shown],
      ['Goes away', now?.clear_at ? localTime(now.clear_at) : '', message && args.clear_at ? localTime(args.clear_at) : message !== undefined && now?.clear_at ? '' : undefined],
    ]),
    unread(missing),
  ];
}

async function notificationsDismiss(app, args) {
  const missing = [];
  const list = await tryRead(app, 'nc_notifications_list', { limit: 100 }, missing);
  const all = list?.notifications ?? [];
  const going = args.all ? all : all.filter((n) => n.id === args.notification_id);
  if (list && !args.all && !going.length) missing.push(`no notification ${short(args.notification_id, 20)} among your ${all.length}`);
  const total = args.all ? Math.min(list?.total ?? 0, 200) : going.length;
  const title = args.all
    ? list
      ? `Dismiss all ${total} of your notifications?`
      : 'Dismiss all your notifications?'
    : going.length
      ? `Dismiss the notification ${named(going[0].subject)}?`
      : `Dismiss notification ${short(args.notification_id, 20)}?`;
  return [
    heading(title),
    going.length
      ? el(
          'table',
          { class: 'entries' },
          el(
            'tbody',
            {},
            going.map((n) =>
              el(
                'tr',
                { class: 'entry' },
                el('td', { class: 'name' }, short(visible(n.subject), 200), n.message ? el('div', { class: 'meta' }, short(visible(n.message), 300)) : null),
                el('td', { class: 'size' }, short(n.app, 50)),
                el('td', { class: 'modified' }, localTime(n.when)),
              ),
            ),
          ),
        )
      : null,
    total > going.length ? el('p', { class: 'meta' }, `…and ${total - going.length} more`) : null,
    el('p', { class: 'meta' }, 'A dismissed notification cannot be brought back.'),
    unread(missing),
  ];
}

export const MESSAGE_PREVIEWS = {
  nc_mail_send: mailSend,
  nc_status_set: statusSet,
  nc_notifications_dismiss: notificationsDismiss,
};
