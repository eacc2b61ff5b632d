// Copies the UI (plain ES modules, no bundler) and uPlot from node_modules
// into OUT_DIR; webui/embed_assets.py then compiles OUT_DIR into memrec.
// Usage: node build.mjs OUT_DIR
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const out = process.argv[2];
if (!out) {
  console.error('usage: node build.mjs OUT_DIR');
  process.exit(1);
}
const uplot = join(here, 'node_modules', 'uplot', 'dist');
if (!existsSync(uplot)) {
  console.error(`memrec webui: ${uplot} is missing: run \`npm ci\` in webui/ (./scripts/setup does).`);
  process.exit(1);
}
mkdirSync(join(out, 'vendor'), { recursive: true });
cpSync(join(here, 'index.html'), join(out, 'index.html'));
cpSync(join(here, 'src'), join(out, 'src'), { recursive: true });
cpSync(join(uplot, 'uPlot.esm.js'), join(out, 'vendor', 'uPlot.esm.js'));
cpSync(join(uplot, 'uPlot.min.css'), join(out, 'vendor', 'uPlot.min.css'));
