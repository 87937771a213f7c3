// Checks the packaged chunkls-<target>-<version>.vsix: what must be inside, what must not.
// Reads the zip's central directory directly (no dependency).
// Usage: check-vsix.mjs [file]; the target and Python versions as for bundle-server
// (CHUNKLS_TARGET, CHUNKLS_PYTHON_VERSIONS).
import { readFileSync } from 'node:fs';
import { inflateRawSync } from 'node:zlib';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { nativeTag, pythonVersions, selectedTarget, vsixName } from './targets.mjs';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
const target = selectedTarget();
const file = process.argv[2] ?? join(repoRoot, vsixName(target, version));
const zip = readFileSync(file);

function entries(buf) {
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) {
    eocd--;
  }
  if (eocd < 0) {
    throw new Error(`${file} is not a zip file`);
  }
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  const names = [];
  for (let i = 0; i < count; i++) {
    if (buf.readUInt32LE(at) !== 0x02014b50) {
      throw new Error('bad central directory');
    }
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    names.push(buf.toString('utf8', at + 46, at + 46 + nameLen));
    at += 46 + nameLen + extraLen + commentLen;
  }
  return names;
}

/** The text of one stored or deflated entry, or undefined. */
function readVsixEntry(buf, wanted) {
  let eocd = buf.length - 22;
  while (eocd >= 0 && buf.readUInt32LE(eocd) !== 0x06054b50) {
    eocd--;
  }
  const count = buf.readUInt16LE(eocd + 10);
  let at = buf.readUInt32LE(eocd + 16);
  for (let i = 0; i < count; i++) {
    const method = buf.readUInt16LE(at + 10);
    const size = buf.readUInt32LE(at + 20);
    const nameLen = buf.readUInt16LE(at + 28);
    const extraLen = buf.readUInt16LE(at + 30);
    const commentLen = buf.readUInt16LE(at + 32);
    const local = buf.readUInt32LE(at + 42);
    if (buf.toString('utf8', at + 46, at + 46 + nameLen) === wanted) {
      const start = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
      const data = buf.subarray(start, start + size);
      return (method === 8 ? inflateRawSync(data) : data).toString('utf8');
    }
    at += 46 + nameLen + extraLen + commentLen;
  }
  return undefined;
}

const names = entries(zip);
const problems = [];
const required = [
  'extension/package.json',
  'extension/out/extension.js',
  'extension/readme.md',
  'extension/changelog.md',
  'extension/LICENSE.txt',
  'extension/bundled/libs/chunkls/__init__.py',
  'extension/bundled/libs/chunkls/__main__.py',
  'extension/bundled/target.json',
];
// numpy and the MCP server's compiled dependencies, once per supported CPython version;
// never in the pure-Python libs.
for (const v of pythonVersions()) {
  for (const native of ['numpy', 'pydantic_core', 'watchfiles', 'rpds']) {
    required.push(`extension/bundled/native/${nativeTag(v)}/${native}/__init__.py`);
  }
}
for (const want of required) {
  if (!names.includes(want)) {
    problems.push(`missing ${want}`);
  }
}
for (const lib of ['pygls', 'lsprotocol', 'attr', 'cattrs', 'mcp', 'pydantic', 'anyio']) {
  if (!names.some((n) => n.startsWith(`extension/bundled/libs/${lib}/`))) {
    problems.push(`missing the bundled library ${lib}`);
  }
}
const forbidden = [
  [/(^|\/)node_modules\//, 'node_modules'],
  [/^extension\/vscode-client\/(src|test|scripts|e2e\/fixture)\//, 'client sources or tests'],
  [/^extension\/(tests|server|bench)\//, 'repository tests or sources'],
  [/\.ts$/, 'TypeScript sources'],
  [/__pycache__|\.pyc$/, 'Python caches'],
  [/\.vsix$/, 'a nested .vsix'],
  [/^extension\/bundled\/libs\/numpy/, 'numpy in bundled/libs (it belongs in bundled/native/cp3XY)'],
  [/^extension\/bundled\/libs\/.*\.(so|pyd|dylib|dll)(\.|$)/, 'compiled code in bundled/libs'],
  [/^extension\/bundled\/native\/[^/]+\/(bin\/|.*\/tests\/)/, 'scripts or test suites in bundled/native'],
];
for (const [pattern, what] of forbidden) {
  const hits = names.filter((n) => pattern.test(n));
  if (hits.length > 0) {
    problems.push(`${what}: ${hits.slice(0, 3).join(', ')}${hits.length > 3 ? ', ...' : ''}`);
  }
}
// The manifest must name the target the native libraries were built for.
const manifest = /^extension\.vsixmanifest$/;
if (names.some((n) => manifest.test(n))) {
  const text = readVsixEntry(zip, 'extension.vsixmanifest');
  if (text !== undefined && !text.includes(`TargetPlatform="${target}"`)) {
    problems.push(`extension.vsixmanifest does not say TargetPlatform="${target}"`);
  }
}
const targetJson = readVsixEntry(zip, 'extension/bundled/target.json');
if (targetJson !== undefined && JSON.parse(targetJson).target !== target) {
  problems.push(`bundled/target.json is for ${JSON.parse(targetJson).target}, not ${target}`);
}
if (problems.length > 0) {
  console.error(`check-vsix: ${file}\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`check-vsix: ${file} ok (${names.length} entries, ${(zip.length / 1024).toFixed(0)} KiB)`);
