// Bundles the test host (host.js) for the browser with the esbuild and the ext-apps / MCP client
// packages of views/ (pinned by views/package-lock.json): node bundle.mjs <out-file>
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const modules = join(here, '..', '..', 'views', 'node_modules');
const { build } = await import(pathToFileURL(join(modules, 'esbuild', 'lib', 'main.js')).href);
await build({
  entryPoints: [join(here, 'host.js')],
  bundle: true,
  format: 'iife',
  platform: 'browser',
  target: 'es2022',
  nodePaths: [modules],
  outfile: process.argv[2],
  logLevel: 'warning',
});
