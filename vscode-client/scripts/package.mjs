// npm run package: bundles the server for one target and packs
// chunkls-<target>-<version>.vsix (vsce package --target), then checks it.
// Target: $CHUNKLS_TARGET (a vsce target, see targets.mjs), default this machine's.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectedTarget, vsixName } from './targets.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));

let target;
try {
  target = selectedTarget();
} catch (error) {
  console.error(`package: ${error.message}`);
  process.exit(1);
}
const out = join(repoRoot, vsixName(target, version));
const env = { ...process.env, CHUNKLS_TARGET: target };

function step(command, args) {
  const r = spawnSync(command, args, { cwd: repoRoot, env, stdio: 'inherit', shell: process.platform === 'win32' });
  if (r.status !== 0) {
    console.error(`package: ${command} ${args.join(' ')} failed (exit ${r.status ?? r.error?.message})`);
    process.exit(1);
  }
}

step(process.execPath, [join(here, 'bundle-server.mjs')]);
step('npx', ['--no-install', 'vsce', 'package', '--no-dependencies', '--allow-missing-repository', '--no-rewrite-relative-links',
  '--target', target, '--out', out]);
step(process.execPath, [join(here, 'check-vsix.mjs'), out]);
