// Installs the chunkls server package and its pure-Python dependencies into
// bundled/libs (repository root), which the .vsix carries and the client puts
// on PYTHONPATH. Python: $CHUNKLS_PYTHON, else python3.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const target = join(repoRoot, 'bundled', 'libs');
const python = process.env.CHUNKLS_PYTHON || 'python3';

function fail(message) {
  console.error(`bundle-server: ${message}`);
  process.exit(1);
}

if (!existsSync(join(repoRoot, 'pyproject.toml')) || !existsSync(join(repoRoot, 'server', 'chunkls'))) {
  fail('no pyproject.toml / server/chunkls at the repository root: nothing to bundle');
}

const probe = spawnSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
if (probe.status !== 0) {
  fail(`cannot run ${python} (set CHUNKLS_PYTHON): ${probe.error?.message ?? probe.stderr}`);
}
const [major, minor] = probe.stdout.trim().split('.').map(Number);
if (major < 3 || (major === 3 && minor < 11)) {
  fail(`${python} is Python ${probe.stdout.trim()}; bundling needs 3.11 or newer`);
}

rmSync(join(repoRoot, 'bundled'), { recursive: true, force: true });
const pip = spawnSync(
  python,
  ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--root-user-action=ignore', '--no-compile', '--no-warn-script-location',
    '--target', target, repoRoot],
  { stdio: 'inherit', cwd: repoRoot, env: { ...process.env, PIP_NO_INPUT: '1' } },
);
if (pip.status !== 0) {
  fail(`pip install --target ${target} failed (exit ${pip.status})`);
}

// Console scripts and caches are of no use inside the extension.
rmSync(join(target, 'bin'), { recursive: true, force: true });
const native = new Set();
const stack = [target];
while (stack.length > 0) {
  const dir = stack.pop();
  for (const name of readdirSync(dir)) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) {
      if (name === '__pycache__') {
        rmSync(full, { recursive: true, force: true });
      } else {
        stack.push(full);
      }
    } else if (/\.(so|pyd|dylib)(\.|$)/.test(name)) {
      native.add(relative(target, full).split(sep)[0]);
    }
  }
}

// The .vsix promises to run on any OS with any Python >= 3.11: that holds only
// for pure-Python libraries. Compiled ones load only on this OS/arch/Python.
if (native.size > 0) {
  const list = [...native].sort().join(', ');
  const message =
    `the bundle has compiled (non pure-Python) code in: ${list}. ` +
    `The .vsix would then work only with Python ${probe.stdout.trim()} on ${process.platform}-${process.arch}.`;
  if (process.env.CHUNKLS_BUNDLE_PURE_ONLY === '1') {
    fail(message);
  }
  console.warn(`bundle-server: WARNING: ${message} (set CHUNKLS_BUNDLE_PURE_ONLY=1 to make this an error)`);
}

const check = spawnSync(python, ['-c', 'import chunkls, pygls, lsprotocol; print(chunkls.__file__)'], {
  encoding: 'utf8',
  env: { ...process.env, PYTHONPATH: target },
  cwd: target,
});
if (check.status !== 0) {
  fail(`the bundle does not import: ${check.stderr}`);
}
console.log(`bundle-server: ${readdirSync(target).sort().join(' ')}`);
