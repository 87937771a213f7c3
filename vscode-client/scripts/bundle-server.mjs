// Bundles the chunkls server for the .vsix (repository root, bundled/):
//
//   bundled/libs           the server package and its pure-Python dependencies
//                          (pygls, lsprotocol, attrs, cattrs, mcp, ...): any OS, any Python >= 3.11
//   bundled/native/cp3XY   the compiled dependencies (numpy; for the MCP server pydantic-core,
//                          rpds-py, watchfiles, cryptography, cffi), binary wheels for
//                          CPython 3.XY on the target platform
//
// The client puts bundled/libs, then bundled/native/cp3XY for the interpreter it
// found, on PYTHONPATH. Everything is downloaded here, at package time; the
// extension never downloads anything.
//
// Environment: CHUNKLS_PYTHON (the interpreter that runs pip; default python3),
// CHUNKLS_TARGET and CHUNKLS_PYTHON_VERSIONS (see targets.mjs).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pipError } from './pipError.mjs';
import { hostTarget, nativeTag, pythonVersions, selectedTarget, TARGETS } from './targets.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const bundled = join(repoRoot, 'bundled');
const libs = join(bundled, 'libs');
const python = process.env.CHUNKLS_PYTHON || 'python3';
const PIP = ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--root-user-action=ignore', '--no-compile', '--no-warn-script-location'];

function fail(message) {
  console.error(`bundle-server: ${message}`);
  process.exit(1);
}

let target;
let versions;
try {
  target = selectedTarget();
  versions = pythonVersions();
} catch (error) {
  fail(error.message);
}

if (!existsSync(join(repoRoot, 'pyproject.toml')) || !existsSync(join(repoRoot, 'server', 'chunkls'))) {
  fail('no pyproject.toml / server/chunkls at the repository root: nothing to bundle');
}

const probe = spawnSync(python, ['-c', 'import sys; print("%d.%d" % sys.version_info[:2])'], { encoding: 'utf8' });
if (probe.status !== 0) {
  fail(`cannot run ${python} (set CHUNKLS_PYTHON): ${probe.error?.message ?? probe.stderr}`);
}
const hostVersion = probe.stdout.trim();
const [major, minor] = hostVersion.split('.').map(Number);
if (major < 3 || (major === 3 && minor < 11)) {
  fail(`${python} is Python ${hostVersion}; bundling needs 3.11 or newer`);
}

/** Numpy version per CPython tag: the newest uv.lock version with a wheel for it, else pyproject's requirement. */
function numpyRequirements() {
  const pyproject = readFileSync(join(repoRoot, 'pyproject.toml'), 'utf8');
  const declared = /["'](numpy\s*[^"']*)["']/.exec(pyproject)?.[1]?.replace(/\s+/g, '') ?? 'numpy';
  const locked = [];
  const lockFile = join(repoRoot, 'uv.lock');
  if (existsSync(lockFile)) {
    for (const block of readFileSync(lockFile, 'utf8').split('[[package]]')) {
      if (!/^name = "numpy"$/m.test(block)) {
        continue;
      }
      const version = /^version = "([^"]+)"$/m.exec(block)?.[1];
      const tags = new Set([...block.matchAll(/numpy-[^/"]+?-(cp3\d+)-\1-[^"/]+\.whl/g)].map((m) => m[1]));
      if (version !== undefined) {
        locked.push({ version, tags });
      }
    }
  }
  const newer = (a, b) => {
    const pa = a.split('.').map(Number);
    const pb = b.split('.').map(Number);
    for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
      if ((pa[i] ?? 0) !== (pb[i] ?? 0)) {
        return (pa[i] ?? 0) - (pb[i] ?? 0);
      }
    }
    return 0;
  };
  const out = {};
  for (const v of versions) {
    const tag = nativeTag(v);
    const best = locked.filter((l) => l.tags.has(tag)).sort((a, b) => newer(b.version, a.version))[0];
    out[tag] = best !== undefined ? `numpy==${best.version}` : declared;
  }
  return out;
}

function runAsync(args) {
  return new Promise((res) => {
    const child = spawn(python, args, { cwd: repoRoot, env: { ...process.env, PIP_NO_INPUT: '1' }, stdio: ['ignore', 'inherit', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    child.on('error', (e) => res({ status: -1, err: e.message }));
    child.on('close', (status) => res({ status, err }));
  });
}

/** Deletes what the extension never needs (caches, scripts, test suites, stubs); returns the top-level entries holding compiled code. */
function prune(root, { tests }) {
  rmSync(join(root, 'bin'), { recursive: true, force: true });
  const compiled = new Set();
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop();
    for (const name of readdirSync(dir)) {
      const full = join(dir, name);
      if (statSync(full).isDirectory()) {
        if (name === '__pycache__' || (tests && name === 'tests')) {
          rmSync(full, { recursive: true, force: true });
        } else {
          stack.push(full);
        }
      } else if (tests && name.endsWith('.pyi')) {
        rmSync(full, { force: true });
      } else if (/\.(so|pyd|dylib|dll)(\.|$)/.test(name)) {
        compiled.add(relative(root, full).split(sep)[0]);
      }
    }
  }
  return compiled;
}

/**
 * Compiled distributions the server never imports, left out of the bundle: mcp's
 * pyjwt[crypto] brings them for OAuth over HTTP, which `chunkls mcp` (stdio) has
 * no use for. The import check at the end proves the bundle runs without them.
 */
const NOT_IMPORTED = new Set(['cffi', 'cryptography']);

/**
 * Takes the distributions owning compiled top-level entries out of `root` (their
 * files by their RECORD, and their .dist-info); returns their names and versions.
 * numpy is left out of the list: its version per CPython comes from uv.lock.
 */
function moveOutCompiled(root, compiledTop) {
  const out = [];
  for (const info of readdirSync(root).filter((name) => name.endsWith('.dist-info'))) {
    const record = readFileSync(join(root, info, 'RECORD'), 'utf8');
    const tops = new Set(
      record
        .split('\n')
        .map((line) => line.split(',')[0].split('/')[0])
        .filter((top) => top && top !== '..' && top !== info),
    );
    if (![...tops].some((top) => compiledTop.has(top))) {
      continue;
    }
    const meta = readFileSync(join(root, info, 'METADATA'), 'utf8');
    const name = /^Name: (.+)$/m.exec(meta)?.[1]?.trim();
    const version = /^Version: (.+)$/m.exec(meta)?.[1]?.trim();
    for (const top of [...tops, info]) {
      rmSync(join(root, top), { recursive: true, force: true });
    }
    if (name !== undefined && version !== undefined && name.toLowerCase() !== 'numpy' && !NOT_IMPORTED.has(name.toLowerCase())) {
      out.push({ name, version });
    }
  }
  return out;
}

/** A platform tag and the older ones whose wheels run there too, newest first. */
function compatiblePlatforms(tag) {
  const many = /^manylinux_2_(\d+)_(\w+)$/.exec(tag);
  if (many !== null) {
    const out = [];
    for (let minor = Number(many[1]); minor >= 17; minor--) {
      out.push(`manylinux_2_${minor}_${many[2]}`);
    }
    return [...out, `manylinux2014_${many[2]}`];
  }
  const musl = /^musllinux_1_(\d+)_(\w+)$/.exec(tag);
  if (musl !== null) {
    return Array.from({ length: Number(musl[1]) }, (_, i) => `musllinux_1_${Number(musl[1]) - i}_${musl[2]}`);
  }
  return [tag];
}

rmSync(bundled, { recursive: true, force: true });
const started = Date.now();

// 1. The pure-Python part, once, for every target: the server and its
//    dependencies, then every compiled distribution (numpy, pydantic-core, ...) taken out again.
const requirements = numpyRequirements();
const pure = runAsync([...PIP, '--target', libs, repoRoot]);
// 2. numpy and the other compiled dependencies per CPython version, binary wheels
//    only, for the target platform (after the pure install: it names them).
// pip takes a platform tag literally: a wheel built for an older glibc or musl
// (manylinux_2_17, musllinux_1_1), which runs on the target too, is named as well.
const platformArgs = TARGETS[target].flatMap(compatiblePlatforms).flatMap((p) => ['--platform', p]);

const pureResult = await pure;
if (pureResult.status !== 0) {
  fail(`pip install --target ${libs} failed (exit ${pureResult.status}):\n${pipError(pureResult.err)}`);
}
// The compiled distributions the pure install brought (for this machine's Python): each
// leaves bundled/libs, and goes to every bundled/native/cp3XY at the same version.
const compiledDists = moveOutCompiled(libs, prune(libs, { tests: false }));
const compiledInLibs = prune(libs, { tests: false });
if (compiledInLibs.size > 0) {
  fail(
    `bundled/libs has compiled code that no installed distribution owns: ${[...compiledInLibs].sort().join(', ')}. ` +
      'Compiled code goes to bundled/native/cp3XY.',
  );
}
for (const tag of Object.keys(requirements)) {
  requirements[tag] = [requirements[tag], ...compiledDists.map((d) => `${d.name}==${d.version}`)];
}
const natives = versions.map((v) => {
  const tag = nativeTag(v);
  const dir = join(bundled, 'native', tag);
  return runAsync([
    ...PIP, '--only-binary=:all:', '--no-deps', '--implementation', 'cp', '--python-version', v, ...platformArgs,
    // pip checks Requires-Python against the interpreter running it, not --python-version.
    '--ignore-requires-python',
    '--target', dir, ...requirements[tag],
  ]).then((r) => ({ v, tag, dir, ...r }));
});

const missing = [];
for (const r of await Promise.all(natives)) {
  if (r.status !== 0) {
    missing.push(`${requirements[r.tag].join(' ')} for Python ${r.v} on ${target}:\n${pipError(r.err)}`);
    continue;
  }
  prune(r.dir, { tests: true });
  console.log(`bundle-server: bundled/native/${r.tag}: ${requirements[r.tag].join(' ')} (${TARGETS[target].join(', ')})`);
}
if (missing.length > 0) {
  fail(`no binary wheel:\n${missing.join('\n')}\nNarrow CHUNKLS_PYTHON_VERSIONS or pick other versions.`);
}
// What this build is for: the client names the target in its "unsupported Python" message.
writeFileSync(
  join(bundled, 'target.json'),
  `${JSON.stringify({ target, platforms: TARGETS[target], native: requirements }, null, 2)}\n`,
);

// 3. On this machine's own target, the bundle must import with the bundling interpreter.
const hostTag = nativeTag(hostVersion);
if (target === hostTarget() && versions.includes(hostVersion)) {
  const check = spawnSync(
    python,
    ['-c', 'import chunkls, chunkls.search, chunkls.storage.cache, pygls, lsprotocol, numpy, chunkls.mcp.server, watchfiles; print(chunkls.__file__, numpy.__file__)'],
    { encoding: 'utf8', env: { ...process.env, PYTHONPATH: [libs, join(bundled, 'native', hostTag)].join(delimiter) }, cwd: libs },
  );
  if (check.status !== 0) {
    fail(`the bundle does not import with Python ${hostVersion}: ${check.stderr}`);
  }
}
console.log(`bundle-server: ${target}, ${((Date.now() - started) / 1000).toFixed(1)} s; bundled/libs: ${readdirSync(libs).sort().join(' ')}`);
