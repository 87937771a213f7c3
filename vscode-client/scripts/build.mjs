// Bundles the client with esbuild into out/extension.js (repo root), or with
// --tests the unit tests into vscode-client/out-test/ for `node --test`.
import { build } from 'esbuild';
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const clientDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const repoRoot = resolve(clientDir, '..');
const tests = process.argv.includes('--tests');
const production = process.argv.includes('--production') || process.env.NODE_ENV === 'production';

if (tests) {
  const testDir = join(clientDir, 'test');
  const outdir = join(clientDir, 'out-test');
  rmSync(outdir, { recursive: true, force: true });
  const entryPoints = readdirSync(testDir)
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => join(testDir, name));
  await build({
    entryPoints,
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Unit tests cover the modules that do not need VS Code; importing it is a mistake.
    external: ['vscode'],
    sourcemap: 'inline',
    logLevel: 'warning',
  });
} else {
  const outfile = join(repoRoot, 'out', 'extension.js');
  rmSync(join(repoRoot, 'out'), { recursive: true, force: true });
  await build({
    entryPoints: [join(clientDir, 'src', 'extension.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    external: ['vscode'],
    minify: production,
    sourcemap: !production,
    sourcesContent: false,
    legalComments: production ? 'linked' : 'inline',
    logLevel: 'warning',
  });
  console.log(`built ${outfile}`);
}
