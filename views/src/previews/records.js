// Previews of the questions about records kept by apps: delete a recipe or change it (Cookbook),
// delete a bookmark (Bookmarks), delete a poll with its votes (Polls). Read with the toolsets' own
// read tools; a bookmark, which no read tool gets by id, is looked for on a bounded number of pages.
import { changes, el, facts, heading, localTime, named, plural, short, text, tryRead, unread, visible } from './kit.js';

const BOOKMARK_PAGES = 5; // pages of 100 bookmarks looked through for one named by id alone

/** "PT1H5M0S" (Cookbook's duration) as "65 min"; anything else as it is. */
function minutes(duration) {
  const found = /^PT(\d+)H(\d+)M/.exec(String(duration ?? ''));
  return found ? `${Number(found[1]) * 60 + Number(found[2])} min` : String(duration ?? '');
}

/** Lines as the server keeps them: trimmed, empty ones left out. */
function lines(list) {
  return (list ?? []).map((line) => String(line).trim()).filter(Boolean);
}

async function recipeOf(app, args, missing) {
  return tryRead(app, 'nc_cookbook_get_recipe', { recipe_id: args.recipe_id }, missing);
}

async function recipeDelete(app, args) {
  const missing = [];
  const recipe = await recipeOf(app, args, missing);
  return [
    heading(recipe ? `Delete the recipe ${named(recipe.name)}?` : `Delete recipe ${short(args.recipe_id, 20)}?`),
    recipe
      ? facts([
          ['Category', recipe.category],
          ['Ingredients', String(recipe.ingredients?.length ?? 0)],
          ['Steps', String(recipe.instructions?.length ?? 0)],
          ['Source', recipe.url],
        ])
      : null,
    ...(recipe ? text('Its ingredients', lines(recipe.ingredients).join('\n'), 'list') : []),
    recipe?.description ? text('Description', recipe.description) : null,
    unread(missing),
  ];
}

async function recipeUpdate(app, args) {
  const missing = [];
  const recipe = await recipeOf(app, args, missing);
  const given = (key, shown = (v) => v) => (args[key] === undefined || args[key] === null ? undefined : shown(args[key]));
  const listed = (key, noun) =>
    Array.isArray(args[key])
      ? [
          ...(recipe ? text(`Its ${noun} now`, lines(recipe[key]).join('\n'), 'list') : []),
          ...text(`Its ${noun} after`, lines(args[key]).join('\n'), 'list'),
        ]
      : [];
  return [
    heading(recipe ? `Change the recipe ${named(recipe.name)}?` : `Change recipe ${short(args.recipe_id, 20)}?`),
    changes([
      ['Name', recipe?.name, given('name', (v) => String(v).trim())],
      ['Category', recipe?.category, given('category', (v) => String(v).trim())],
      ['Keywords', recipe?.keywords?.split(',').join(', '), given('keywords', (v) => v.map((w) => String(w).trim()).filter(Boolean).join(', '))],
      ['Servings', recipe?.servings, given('servings', String)],
      ['Preparation', minutes(recipe?.prep_time), given('prep_minutes', (v) => `${v} min`)],
      ['Cooking', minutes(recipe?.cook_time), given('cook_minutes', (v) => `${v} min`)],
      ['Source', recipe?.url, given('source_url')],
    ]),
    ...(typeof args.description === 'string'
      ? [...(recipe ? text('Its description now', recipe.description) : []), ...text('Its description after', args.description)]
      : []),
    ...listed('ingredients', 'ingredients'),
    ...listed('instructions', 'steps'),
    recipe?.cut ? el('p', { class: 'meta' }, 'The recipe now is longer than shown here.') : null,
    unread(missing),
  ];
}

/** A bookmark named by its id alone: looked for on the first pages of the person's bookmarks. */
async function findBookmark(app, bookmarkId, missing) {
  for (let page = 0; page < BOOKMARK_PAGES; page += 1) {
    const found = await tryRead(app, 'nc_bookmarks_list_bookmarks', { page, limit: 100 }, missing);
    const bookmark = (found?.bookmarks ?? []).find((b) => b.id === bookmarkId);
    if (bookmark) return bookmark;
    if (!found || found.next_page === null || found.next_page === undefined) return null;
  }
  missing.push(`no bookmark ${short(bookmarkId, 20)} among the first ${BOOKMARK_PAGES * 100}`);
  return null;
}

async function bookmarkDelete(app, args) {
  const missing = [];
  const bookmark = await findBookmark(app, args.bookmark_id, missing);
  const folders = bookmark ? await tryRead(app, 'nc_bookmarks_list_folders', {}, missing) : null;
  const paths = new Map((folders?.folders ?? []).map((f) => [f.id, f.path]));
  const where = (bookmark?.folders ?? []).map((id) => (id === -1 ? '(top level)' : paths.get(id) ?? `folder ${id}`));
  return [
    heading(bookmark ? `Delete the bookmark ${named(bookmark.title || bookmark.url)}?` : `Delete bookmark ${short(args.bookmark_id, 20)}?`),
    bookmark
      ? facts([
          ['Link', bookmark.url],
          ['Tags', (bookmark.tags ?? []).join(', ')],
          ['Folders', where.join(', ')],
          ['Last changed', localTime(bookmark.modified)],
        ])
      : null,
    bookmark?.description ? text('Description', bookmark.description) : null,
    unread(missing),
  ];
}

async function pollDelete(app, args) {
  const missing = [];
  const poll = await tryRead(app, 'nc_polls_get_poll', { poll_id: args.poll_id }, missing);
  const votes = poll?.votes?.length ?? 0;
  const options = poll?.options ?? [];
  return [
    heading(
      poll
        ? `Delete the poll ${named(poll.title)} with ${poll.votes_cut ? 'over ' : ''}${plural(votes, 'vote')}?`
        : `Delete poll ${short(args.poll_id, 20)}?`,
    ),
    poll ? facts([['Owner', poll.owner], ['Voters', [...new Set(poll.votes.map((v) => v.user))].join(', ')]]) : null,
    options.length
      ? el(
          'table',
          { class: 'entries' },
          el('thead', {}, el('tr', {}, el('th', {}, 'Option'), el('th', {}, 'yes'), el('th', {}, 'no'), el('th', {}, 'maybe'))),
          el(
            'tbody',
            {},
            options.map((o) =>
              el('tr', {}, el('td', { class: 'name' }, short(visible(o.text), 120)), el('td', {}, String(o.yes)), el('td', {}, String(o.no)), el('td', {}, String(o.maybe))),
            ),
          ),
        )
      : null,
    poll?.description ? text('Description', poll.description) : null,
    unread(missing),
  ];
}

export const RECORD_PREVIEWS = {
  nc_cookbook_delete_recipe: recipeDelete,
  nc_cookbook_update_recipe: recipeUpdate,
  nc_bookmarks_delete_bookmark: bookmarkDelete,
  nc_polls_delete_poll: pollDelete,
};
