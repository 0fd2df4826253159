// The approval preview: beside every question the server asks a person before it deletes,
// overwrites, publishes or restores something, it shows what the question is about, with a
// heading that names the thing ("Delete the folder 'Projects'?"). The view gets the tool's
// arguments from the host and reads the target itself with this server's read tools through the
// host, with the caller's own access: it never sees more than those tools show. A password among
// the arguments is never drawn. When the tool's result arrives, its outcome (done, or declined) is
// shown on top. Every tool that asks has an entry in PREVIEWS (tests/views/test_every_question.py
// fails for one without).
import { el, short, show, start, textOf, timesConverted, zoneNote } from './common.js';
import { APP_PREVIEWS } from './previews/apps.js';
import { FILE_PREVIEWS } from './previews/files.js';
import { MESSAGE_PREVIEWS } from './previews/messages.js';
import { PERSONAL_PREVIEWS } from './previews/personal.js';
import { RECORD_PREVIEWS } from './previews/records.js';
import { STRUCTURE_PREVIEWS } from './previews/structure.js';

export const PREVIEWS = { ...FILE_PREVIEWS, ...PERSONAL_PREVIEWS, ...APP_PREVIEWS, ...RECORD_PREVIEWS, ...MESSAGE_PREVIEWS, ...STRUCTURE_PREVIEWS };

let outcome = null; // the tool's result, once it came
let preview = [el('p', { class: 'meta' }, 'Loading what this is about…')];

function redraw() {
  show(...(outcome ? [outcome] : []), ...preview);
}

function toolName(app) {
  return app.getHostContext()?.toolInfo?.tool?.name ?? '';
}

start('Nextcloud approval preview', {
  onInput: async (args, app) => {
    const name = toolName(app);
    const build = Object.hasOwn(PREVIEWS, name) ? PREVIEWS[name] : null;
    timesConverted(true);
    try {
      preview = build
        ? (await build(app, args ?? {})).flat().filter(Boolean)
        : [el('p', { class: 'problem' }, `Nothing to preview for ${short(name, 80) || 'this tool'}.`)];
      if (timesConverted()) preview.push(zoneNote());
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
