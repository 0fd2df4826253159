// Builds the MCP Apps views into self-contained HTML files (make views):
//   node build.mjs [out-dir]   (default: ../nextcloud_mcp_server/views)
// Each view is src/<name>.js bundled with the ext-apps App bridge (esbuild, pinned by the
// lockfile), inlined with src/view.css into src/view.html. The Content-Security-Policy allows that
// one script and that one style by their SHA-256 and nothing else: no origin, no eval, no fetch.
// The same sources and lockfile give the same bytes (tests/views/test_views_build.py checks).
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const out = resolve(process.argv[2] ?? join(here, '..', 'nextcloud_mcp_server', 'views'));
const VIEWS = {
  agenda: { title: 'Nextcloud agenda', waiting: 'Waiting for the calendar…' },
  approval: { title: 'What this approval is about', waiting: 'Waiting for the action…' },
};
const pinned = JSON.parse(await readFile(join(here, 'package.json'), 'utf8')).dependencies;
const NOTICE =
  `Built by views/build.mjs from views/src; bundles @modelcontextprotocol/ext-apps ${pinned['@modelcontextprotocol/ext-apps']}, ` +
  `@modelcontextprotocol/client ${pinned['@modelcontextprotocol/client']} and zod ${pinned.zod} (MIT licensed). Do not edit: run make views.`;

// zod carries its error messages in 50 languages; the views never show zod's messages, so only
// English (what zod configures itself with) is bundled: about 250 kB less per view.
const englishOnly = {
  name: 'zod-english-only',
  setup(build) {
    build.onResolve({ filter: /\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${join('node_modules', 'zod')}`) ? { path: join(dirname(args.importer), '..', 'locales', 'index.js'), namespace: 'zod-locales' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: "export { default as en } from './en.js';",
      resolveDir: dirname(args.path),
    }));
  },
};

const hash = (text) => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
const template = await readFile(join(here, 'src', 'view.html'), 'utf8');
const style = (await readFile(join(here, 'src', 'view.css'), 'utf8')).trim();

await mkdir(out, { recursive: true });
for (const [name, { title, waiting }] of Object.entries(VIEWS)) {
  const bundled = await build({
    entryPoints: [join(here, 'src', `${name}.js`)],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    charset: 'utf8',
    write: false,
    logLevel: 'warning',
    plugins: [englishOnly],
  });
  const script = bundled.outputFiles[0].text.trim();
  if (/<\/script/i.test(script) || /<!--/.test(script)) throw new Error(`${name}: the bundle cannot be inlined safely`);
  const csp = [
    "default-src 'none'",
    `script-src ${hash(script)}`,
    `style-src ${hash(style)}`,
    "img-src 'none'",
    "connect-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
  const values = { NOTICE, CSP: csp, TITLE: title, WAITING: waiting, STYLE: style, SCRIPT: script };
  const html = template.replace(/\{\{([A-Z]+)\}\}/g, (_, key) => values[key]);
  await writeFile(join(out, `${name}.html`), html);
  console.log(`${name}.html: ${Buffer.byteLength(html)} bytes`);
}
