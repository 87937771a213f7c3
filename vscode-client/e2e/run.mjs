// End-to-end test of the packaged extension in a real VS Code: code-server
// (VS Code in a browser) shown in Debian's headless Chromium, driven by
// playwright-core. Asserts on what VS Code shows (DOM), never on sleeps.
//
//   npm run test:e2e            # setup.sh, npm run package, then the tests
//
// Environment:
//   CHUNKLS_E2E_HOME        cache folder for the tools (default /tmp/chunkls-e2e)
//   CHUNKLS_E2E_SKIP_SETUP  1: do not run setup.sh (the cache must be ready)
//   CHUNKLS_E2E_VSIX        test this .vsix instead of running `npm run package`
//   CHUNKLS_E2E_PYTHON      interpreter for chunkls.server.pythonPath (default python3)
//   CHUNKLS_E2E_KEEP        1: keep the temporary workspace and logs
//   CHUNKLS_E2E_TIMEOUT_MS  per-wait timeout (default 30000)
//   CHUNKLS_E2E_SKIP_WITHOUT_SERVER  1: when the bundled server does not answer
//                           `initialize`, skip the VS Code tests and exit 0
//                           (default: that is a failure)
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { selectedTarget, vsixName } from '../scripts/targets.mjs';
import { chunklsPids } from './processes.mjs';
import { terminalSettings, terminalTests, writeChunklsWrapper } from './terminal.mjs';
import { mcpScenarios } from './mcp.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..', '..');
const e2eHome = process.env.CHUNKLS_E2E_HOME || '/tmp/chunkls-e2e';
const screenshotDir = join(here, 'screenshots');
// Screenshots of failed tests go outside the repository (and the .vsix).
const failureDir = join(e2eHome, 'failures');
const timeout = Number(process.env.CHUNKLS_E2E_TIMEOUT_MS || 30000);
const started = Date.now();

const log = (msg) => console.log(`[e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);

function finish(passed, failed) {
  console.log(`e2e: ${passed} passed, ${failed} failed`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

function abort(message) {
  console.error(`e2e: ${message}`);
  finish(0, 1);
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: 'inherit', ...opts });
  if (r.status !== 0) {
    abort(`${cmd} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
  }
}

// 1. Tools -------------------------------------------------------------------
if (process.env.CHUNKLS_E2E_SKIP_SETUP !== '1') {
  log('setup.sh');
  run('bash', [join(here, 'setup.sh')], { env: { ...process.env, CHUNKLS_E2E_HOME: e2eHome } });
}
const envFile = join(e2eHome, 'env.json');
if (!existsSync(envFile)) {
  abort(`${envFile} missing: run vscode-client/e2e/setup.sh first`);
}
const tools = JSON.parse(readFileSync(envFile, 'utf8'));
const { chromium } = createRequire(join(tools.playwrightCore, 'package.json'))(tools.playwrightCore);

// 2. The .vsix ---------------------------------------------------------------
const version = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')).version;
let vsix = process.env.CHUNKLS_E2E_VSIX;
if (!vsix) {
  log('npm run package');
  run('npm', ['run', '--silent', 'package'], { cwd: repoRoot });
  vsix = join(repoRoot, vsixName(selectedTarget(), version));
}
if (!existsSync(vsix)) {
  abort(`no ${vsix}`);
}
vsix = resolve(vsix);

// 3. A scratch VS Code: home, user data, extensions, workspace ---------------
mkdirSync(e2eHome, { recursive: true });
const scratch = mkdtempSync(join(e2eHome, 'run-'));
const home = join(scratch, 'home');
const userData = join(scratch, 'user-data');
const extensionsDir = join(scratch, 'extensions');
const workspace = join(scratch, 'workspace');
for (const d of [home, join(userData, 'User'), join(userData, 'Machine'), extensionsDir]) {
  mkdirSync(d, { recursive: true });
}
cpSync(join(here, 'fixture'), workspace, { recursive: true });
// a key the server warns about: its log's levels are checked in the Output panel's file
writeFileSync(join(workspace, 'pyproject.toml'), '[tool.chunkls]\nspelled-wrong = 1\n');

const pythonCmd = process.env.CHUNKLS_E2E_PYTHON || 'python3';
const py = spawnSync(pythonCmd, ['-c', 'import sys; print("cp%d%d" % sys.version_info[:2]); print(sys.executable)'], { encoding: 'utf8' });
if (py.status !== 0) {
  abort(`cannot run ${pythonCmd}`);
}
const [pythonTag, python] = py.stdout.trim().split('\n');

// chunkls.server.pythonPath is machine-overridable: in code-server (a remote
// window) it comes from the remote machine's settings, not the browser user's.
writeFileSync(join(userData, 'Machine', 'settings.json'), JSON.stringify({ 'chunkls.server.pythonPath': python }, null, 2));
writeFileSync(
  join(userData, 'User', 'settings.json'),
  JSON.stringify(
    {
      'chunkls.trace.server': 'messages',
      'workbench.startupEditor': 'none',
      'workbench.tips.enabled': false,
      'workbench.enableExperiments': false,
      'workbench.secondarySideBar.defaultVisibility': 'hidden',
      // on: VS Code's MCP support is an AI feature (vscode-client/e2e/mcp.mjs starts the server)
      'chat.disableAIFeatures': false,
      'security.workspace.trust.enabled': false,
      'telemetry.telemetryLevel': 'off',
      'update.mode': 'none',
      'extensions.autoCheckUpdates': false,
      'extensions.autoUpdate': false,
      'extensions.ignoreRecommendations': true,
      'git.enabled': false,
      'editor.minimap.enabled': false,
      'editor.hover.delay': 150,
      'editor.codeLens': true,
      'files.autoSave': 'off',
      'window.restoreWindows': 'none',
      ...terminalSettings(join(scratch, 'bin')),
    },
    null,
    2,
  ),
);

const toolEnv = {
  ...process.env,
  PATH: `${tools.nodeBin}:${process.env.PATH}`,
  HOME: home,
  XDG_CONFIG_HOME: join(home, '.config'),
  XDG_DATA_HOME: join(home, '.local', 'share'),
  XDG_CACHE_HOME: join(home, '.cache'),
  EXTENSIONS_GALLERY: '{}',
  SHELL: '/bin/bash',
};
delete toolEnv.VSCODE_IPC_HOOK_CLI;

log(`installing ${vsix}`);
run(tools.codeServer, ['--extensions-dir', extensionsDir, '--user-data-dir', userData, '--install-extension', vsix], {
  env: toolEnv,
  stdio: ['ignore', 'inherit', 'inherit'],
});

function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', rej);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

// 4. Preflight: the installed extension's bundled server answers `initialize` --
const installed = readdirSync(extensionsDir).find((name) => name.startsWith('chunkls.chunkls-'));
if (!installed) {
  abort(`the extension is not in ${extensionsDir}`);
}
// PYTHONPATH as the client builds it: the pure-Python libs, then numpy for this CPython.
const bundledLibs = [
  join(extensionsDir, installed, 'bundled', 'libs'),
  join(extensionsDir, installed, 'bundled', 'native', pythonTag),
].join(delimiter);

/** Starts `python -m chunkls serve --stdio` like the client does and waits for the initialize answer. */
function preflightServer() {
  return new Promise((res) => {
    const child = spawn(python, ['-m', 'chunkls', 'serve', '--stdio'], {
      cwd: workspace,
      env: { ...process.env, PYTHONPATH: bundledLibs },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = Buffer.alloc(0);
    let err = '';
    const done = (ok, detail) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      res({ ok, detail });
    };
    const timer = setTimeout(() => done(false, `no answer to initialize in 20 s; stderr: ${err.slice(-800)}`), 20000);
    child.on('error', (e) => done(false, e.message));
    child.on('exit', (code) => done(false, `exited with ${code} before answering initialize; stderr: ${err.slice(-800)}`));
    child.stderr.on('data', (d) => (err += d));
    child.stdout.on('data', (d) => {
      out = Buffer.concat([out, d]);
      const text = out.toString('utf8');
      const end = text.indexOf('\r\n\r\n');
      const length = /Content-Length: *(\d+)/i.exec(text.slice(0, Math.max(0, end)));
      if (end >= 0 && length && out.length >= Buffer.byteLength(text.slice(0, end)) + 4 + Number(length[1])) {
        const start = Buffer.byteLength(text.slice(0, end)) + 4;
        const body = out.subarray(start, start + Number(length[1]));
        const message = JSON.parse(body.toString('utf8'));
        if (message.id === 1 && message.result) {
          const commands = message.result.capabilities?.executeCommandProvider?.commands ?? [];
          done(true, `capabilities: ${Object.keys(message.result.capabilities).join(', ')}; commands: ${commands.join(', ')}`);
        } else {
          done(false, `unexpected answer ${body.toString('utf8').slice(0, 300)}`);
        }
      }
    });
    const body = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        processId: process.pid,
        rootUri: `file://${workspace}`,
        workspaceFolders: [{ uri: `file://${workspace}`, name: 'workspace' }],
        capabilities: {},
        initializationOptions: { exclude: [], codeLens: { enabled: true }, navigation: { languages: ['markdown', 'plaintext', 'python'] } },
      },
    });
    child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}

const preflight = await preflightServer();
if (!preflight.ok) {
  console.log(`e2e: the bundled server (${python} -m chunkls serve --stdio, PYTHONPATH=${bundledLibs}) is not usable: ${preflight.detail}`);
  rmSync(scratch, { recursive: true, force: true });
  if (process.env.CHUNKLS_E2E_SKIP_WITHOUT_SERVER === '1') {
    console.log('e2e: 0 passed, 0 failed; every scenario skipped (no usable server)');
    process.exit(0);
  }
  console.log('e2e: 0 passed, 1 failed; no scenario ran');
  process.exit(1);
}
log(`ok - the bundled server answers initialize: ${preflight.detail}`);
writeChunklsWrapper(join(scratch, 'bin'), python, bundledLibs);

// 5. code-server --------------------------------------------------------------
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const csLog = join(scratch, 'code-server.log');
let csOutput = '';
const cs = spawn(
  tools.codeServer,
  [
    '--bind-addr', `127.0.0.1:${port}`,
    '--auth', 'none',
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--disable-getting-started-override',
    '--user-data-dir', userData,
    '--extensions-dir', extensionsDir,
    workspace,
  ],
  { env: toolEnv, detached: true, stdio: ['ignore', 'pipe', 'pipe'] },
);
cs.stdout.on('data', (d) => (csOutput += d));
cs.stderr.on('data', (d) => (csOutput += d));

let browser;
let cleanedUp = false;
function cleanup() {
  if (cleanedUp) {
    return;
  }
  cleanedUp = true;
  try {
    process.kill(-cs.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  writeFileSync(csLog, csOutput);
}
process.on('exit', cleanup);
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    cleanup();
    process.exit(130);
  });
}

async function waitForHealth() {
  const deadline = Date.now() + 60000;
  while (Date.now() < deadline) {
    if (cs.exitCode !== null) {
      throw new Error(`code-server exited (${cs.exitCode}):\n${csOutput}`);
    }
    try {
      const r = await fetch(`${base}/healthz`);
      if (r.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`code-server did not answer /healthz:\n${csOutput}`);
}

// 6. Tests --------------------------------------------------------------------
const fixture = (rel) => readFileSync(join(here, 'fixture', rel), 'utf8').split('\n');
const lineOf = (rel, prefix) => fixture(rel).findIndex((l) => l.startsWith(prefix)) + 1;

let page;
let passed = 1; // the preflight above
let failed = 0;

async function test(name, fn) {
  const t0 = Date.now();
  try {
    await fn();
    passed++;
    log(`ok - ${name} (${Date.now() - t0} ms)`);
  } catch (error) {
    failed++;
    log(`not ok - ${name}: ${error && error.stack ? error.stack : error}`);
    mkdirSync(failureDir, { recursive: true });
    const shot = join(failureDir, `${name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()}.png`);
    await page?.screenshot({ path: shot }).catch(() => undefined);
    log(`  screenshot: ${shot}`);
    await page?.keyboard.press('Escape').catch(() => undefined);
  }
}

async function shot(name) {
  mkdirSync(screenshotDir, { recursive: true });
  await page.screenshot({ path: join(screenshotDir, `${name}.png`) });
}

/** Waits until `fn` (run in the page) returns a truthy value; returns it. */
async function waitInPage(fn, arg, what) {
  const handle = await page.waitForFunction(fn, arg, { timeout, polling: 100 }).catch((e) => {
    throw new Error(`timed out waiting for ${what}: ${e.message.split('\n')[0]}`);
  });
  return handle.jsonValue();
}

async function statusText() {
  return page.evaluate(() => [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent || '').join(' | '));
}

/** The line number VS Code's status bar shows for the cursor ("Ln 4, Col 1"). */
async function cursorLine() {
  const text = await waitInPage(
    () => [...document.querySelectorAll('.statusbar-item')].map((e) => e.textContent || '').find((t) => /Ln \d+, Col \d+/.test(t)),
    undefined,
    'the cursor position in the status bar',
  );
  return Number(/Ln (\d+)/.exec(text)[1]);
}

async function waitCursorLine(line, what) {
  await waitInPage(
    (want) =>
      [...document.querySelectorAll('.statusbar-item')].some((e) => new RegExp(`Ln ${want}, Col \\d+`).test(e.textContent || '')),
    line,
    `${what} (cursor on line ${line})`,
  ).catch(async (e) => {
    throw new Error(`${e.message}; cursor is on line ${await cursorLine().catch(() => '?')}`);
  });
}

async function waitActiveTab(name) {
  await waitInPage(
    (want) => (document.querySelector('.tab.active')?.textContent || '').includes(want),
    name,
    `the active tab ${name}`,
  );
}

async function openFile(relPath) {
  const name = relPath.split('/').pop();
  await page.locator('.monaco-workbench .part.editor').click({ position: { x: 300, y: 300 } }).catch(() => undefined);
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout });
  await input.fill(relPath);
  const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
  await row.waitFor({ state: 'visible', timeout });
  // Enter opens the focused row: wait until the filter has put the file there
  // (before, the recently opened editors are listed, the active one first)
  await waitInPage(
    (want) => (document.querySelector('.quick-input-list .monaco-list-row.focused')?.textContent || '').includes(want),
    name,
    `Quick Open focusing ${relPath}`,
  );
  await page.keyboard.press('Enter');
  await waitActiveTab(name);
  await page.locator('.editor-instance .monaco-editor .view-lines').first().waitFor({ state: 'visible', timeout });
}

/** Opens Search Chunks and types `typed` into it, as one types; returns its input. */
async function searchChunksFor(typed) {
  await runCommand('Chunks: Search Chunks');
  // Our QuickPick replaces the command palette: wait for its title before typing.
  await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Search Chunks' }).waitFor({ state: 'visible', timeout });
  const input = page.locator('.quick-input-widget input');
  await input.click();
  await input.pressSequentially(typed, { delay: 20 });
  return input;
}

/** Waits until a row of the open picker holds `text`. */
async function waitRow(text, what) {
  await waitInPage(
    (id) => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].some((r) => (r.textContent || '').includes(id)),
    text,
    what,
  );
}

/** Moves the focus in the open picker to the row holding `text`, then presses Enter. */
async function enterOnResult(text) {
  for (let i = 0; i < 10; i++) {
    const focused = await page.evaluate(() => document.querySelector('.quick-input-list .monaco-list-row.focused')?.textContent || '');
    if (focused.includes(text)) {
      break;
    }
    await page.keyboard.press('ArrowDown');
  }
  await page.keyboard.press('Enter');
}

async function runCommand(title) {
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ state: 'visible', timeout });
  await page.keyboard.press('Enter');
}

/** Screen coordinates of the middle of the `occurrence`-th text `needle` in the active editor. */
async function textPosition(needle, occurrence = 0) {
  return waitInPage(
    ([want, nth]) => {
      const lines = [...document.querySelectorAll('.editor-instance .monaco-editor .view-lines .view-line')]
        .filter((l) => l.offsetParent !== null)
        .sort((a, b) => a.getBoundingClientRect().top - b.getBoundingClientRect().top);
      let seen = 0;
      for (const line of lines) {
        const text = line.textContent.replace(/\u00a0/g, ' ');
        let at = text.indexOf(want);
        while (at >= 0) {
          if (seen++ === nth) {
            // Walk the text nodes to the character in the middle of the match.
            const target = at + Math.floor(want.length / 2);
            const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
            let offset = 0;
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
              const len = node.textContent.length;
              if (offset + len > target) {
                const range = document.createRange();
                range.setStart(node, target - offset);
                range.setEnd(node, target - offset + 1);
                const r = range.getBoundingClientRect();
                return { x: r.left + r.width / 2, y: r.top + r.height / 2 };
              }
              offset += len;
            }
          }
          at = text.indexOf(want, at + 1);
        }
      }
      return null;
    },
    [needle, occurrence],
    `the text ${needle} in the editor`,
  );
}

/** Waits for the status bar item "N chunks" without the spinner. */
async function waitChunkCount() {
  await waitInPage(
    () =>
      [...document.querySelectorAll('.statusbar-item')].some(
        (e) => /^\s*\d+ chunks?\s*$/.test(e.textContent || '') && !e.querySelector('.codicon-modifier-spin, .codicon-sync'),
      ),
    undefined,
    'a status bar item with the chunk count',
  ).catch(async (e) => {
    throw new Error(`${e.message}; status bar: ${await statusText()}`);
  });
}

/** Pids of `python -m chunkls serve` processes running in the test workspace. */
function serverPids() {
  return chunklsPids('serve', workspace);
}

/** The chunkls output channel's log files under `dir`. */
function findLogs(dir) {
  const logs = [];
  for (const name of existsSync(dir) ? readdirSync(dir) : []) {
    const full = join(dir, name);
    if (statSync(full).isDirectory()) {
      logs.push(...findLogs(full));
    } else if (/chunkls/i.test(name) && name.endsWith('.log')) {
      logs.push(full);
    }
  }
  return logs;
}

async function goToLine(line) {
  await page.keyboard.press('Control+G');
  const input = page.locator('.quick-input-widget input');
  await input.waitFor({ state: 'visible', timeout });
  await input.fill(`:${line}`);
  await page.keyboard.press('Enter');
  await waitCursorLine(line, 'go to line');
}

async function lensTexts() {
  return page.evaluate(() => [...document.querySelectorAll('.codelens-decoration a')].map((a) => a.textContent || ''));
}

async function waitLens(id) {
  await waitInPage(
    (want) => [...document.querySelectorAll('.codelens-decoration a')].some((a) => (a.textContent || '').includes(want)),
    id,
    `a code lens with ${id}`,
  ).catch(async (e) => {
    throw new Error(`${e.message}; lenses: ${JSON.stringify(await lensTexts())}`);
  });
}

/**
 * Hovers the first `needle` in the active editor until a hover holding one of
 * `anyOf` shows (lenses appearing above the text move it: each try re-aims).
 */
async function waitHover(needle, anyOf, what) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const pos = await textPosition(needle, 0);
    await page.mouse.move(pos.x - 40, pos.y + 60);
    await page.mouse.move(pos.x, pos.y, { steps: 4 });
    const shown = await page
      .waitForFunction(
        (texts) =>
          [...document.querySelectorAll('.monaco-hover')].some(
            (h) => h.offsetParent !== null && texts.some((t) => (h.textContent || '').includes(t)),
          ),
        anyOf,
        { timeout: 4000, polling: 100 },
      )
      .then(() => true, () => false);
    if (shown) {
      return;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
  }
}

/** Clicks the `occurrence`-th `needle`, presses F12, and waits for greet.py at `line`. */
async function goToDefinition(needle, occurrence, line, what) {
  const pos = await textPosition(needle, occurrence);
  await page.mouse.click(pos.x, pos.y);
  await page.keyboard.press('F12');
  await waitActiveTab('greet.py');
  await waitCursorLine(line, what);
}

/** Waits until `fn` (run here, not in the page) returns a truthy value; returns it. */
async function waitHere(fn, what) {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = fn();
    if (value) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((done) => setTimeout(done, 100));
  }
}

const greetLine = lineOf('app/greet.py', 'def greet');
const farewellLine = lineOf('app/greet.py', 'def farewell');
const shoutLine = lineOf('app/greet.py', 'def shout');

try {
  log(`code-server on ${base}`);
  await waitForHealth();
  browser = await chromium.launch({
    executablePath: tools.chromium,
    headless: true,
    env: toolEnv,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1200, height: 760 }, deviceScaleFactor: 1 });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
  page = await context.newPage();
  await page.goto(`${base}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60000 });
  await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ state: 'visible', timeout });
  log('workbench ready');

  await test('lenses show chunk IDs in a Python file', async () => {
    await openFile('app/greet.py');
    await waitLens('app/greet.py#function-greet');
    await waitLens('app/greet.py#function-farewell');
    await shot('lenses');
  });

  await test('status bar counts the chunks', async () => {
    await waitChunkCount();
  });

  await test("the server's log is in the output channel once per message, at its level", async () => {
    const deadline = Date.now() + timeout;
    for (;;) {
      const lines = findLogs(join(userData, 'logs')).flatMap((f) => readFileSync(f, 'utf8').split('\n'));
      const indexed = lines.filter((l) => /Indexed \d+ chunks in /.test(l));
      const warned = lines.filter((l) => l.includes("unknown key 'spelled-wrong'"));
      if (indexed.length > 0 && warned.length > 0) {
        if (indexed.length !== 1 || !indexed[0].includes('[info]') || warned.length !== 1 || !warned[0].includes('[warning]')) {
          throw new Error(`expected each once, at info and warning: ${JSON.stringify([...indexed, ...warned])}`);
        }
        return;
      }
      if (Date.now() > deadline) {
        throw new Error(`the log lines did not come: ${JSON.stringify([...indexed, ...warned])}`);
      }
      await page.waitForTimeout(250);
    }
  });

  await test('a lens click copies the chunk ID', async () => {
    await page.locator('.codelens-decoration a', { hasText: 'app/greet.py#function-greet' }).first().click();
    await waitInPage(
      () => [...document.querySelectorAll('.statusbar-item')].some((e) => (e.textContent || '').includes('Copied chunk ID app/greet.py#function-greet')),
      undefined,
      'the "Copied chunk ID" status bar message',
    );
    const clip = await page.evaluate(() => navigator.clipboard.readText()).catch(() => undefined);
    if (clip !== undefined && clip !== 'app/greet.py#function-greet') {
      throw new Error(`clipboard holds ${JSON.stringify(clip)}`);
    }
  });

  await test('Copy Chunk ID from the palette copies the chunk at the cursor', async () => {
    await goToLine(shoutLine + 1);
    await runCommand('Chunks: Copy Chunk ID');
    await waitInPage(
      () => [...document.querySelectorAll('.statusbar-item')].some((e) => (e.textContent || '').includes('Copied chunk ID app/greet.py#function-shout')),
      undefined,
      'the "Copied chunk ID app/greet.py#function-shout" status bar message',
    ).catch(async (e) => {
      throw new Error(`${e.message}; status bar: ${await statusText()}`);
    });
  });

  await test('hover over an ID in a Markdown transcript shows the preview', async () => {
    await openFile('notes/transcript.md');
    await waitHover('app/greet.py#function-greet', ['Say hello', 'def greet'], 'a hover with the preview of function greet');
    await shot('hover');
    await page.mouse.move(5, 5);
  });

  await test('F12 on an ID lands on the chunk line', async () => {
    await page.keyboard.press('Escape');
    await goToDefinition('app/greet.py#function-greet', 1, greetLine, 'F12 to open greet');
  });

  await test('Search Chunks lists results and Enter opens the chunk', async () => {
    const input = await searchChunksFor('goodbye visiting');
    const want = 'app/greet.py#function-farewell';
    await waitRow(want, `a search result ${want}`);
    await shot('search');
    // The item's copy button copies the ID and leaves the picker open.
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: want }).first();
    await row.hover();
    await row.locator('.action-label.codicon-copy').first().click();
    await waitInPage(
      (id) => [...document.querySelectorAll('.statusbar-item')].some((e) => (e.textContent || '').includes(`Copied chunk ID ${id}`)),
      want,
      'the "Copied chunk ID" message after the item button',
    );
    await input.focus();
    await enterOnResult(want);
    await waitActiveTab('greet.py');
    await waitCursorLine(farewellLine, 'Enter on the farewell result');
  });

  await test('Search Chunks opens a class at the method that answers the query', async () => {
    // the palette lists whole chunks; the one opened asks the server for its best part
    await searchChunksFor('sign a visitor name');
    const want = 'app/guestbook.py#class-Guestbook';
    await waitRow(want, `a search result ${want}`);
    await enterOnResult(want);
    await waitActiveTab('guestbook.py');
    await waitCursorLine(lineOf('app/guestbook.py', '    def sign'), 'Enter on the Guestbook result (its method sign)');
  });

  await test('Go to Symbol in Workspace opens a chunk at the range the server resolves', async () => {
    // the server lists symbols without the ranges it would have to search for and
    // answers workspaceSymbol/resolve for the one chosen (a resolve that failed
    // would leave VS Code's placeholder range: the file's first line)
    await runCommand('Go to Symbol in Workspace');
    const input = page.locator('.quick-input-widget input');
    await input.fill('#Guestbook');
    const want = 'app/guestbook.py#class-Guestbook';
    await waitRow(want, `a workspace symbol ${want}`);
    await enterOnResult(want);
    await waitActiveTab('guestbook.py');
    await waitCursorLine(lineOf('app/guestbook.py', 'class Guestbook'), 'Enter on the Guestbook symbol');
  });

  await test('after renaming a function and saving, the lens shows the new ID', async () => {
    await openFile('app/greet.py');
    await waitLens('app/greet.py#function-farewell');
    await goToLine(farewellLine);
    await page.keyboard.press('Home');
    for (let i = 0; i < 'def '.length; i++) {
      await page.keyboard.press('ArrowRight');
    }
    for (let i = 0; i < 'farewell'.length; i++) {
      await page.keyboard.press('Shift+ArrowRight');
    }
    await page.keyboard.type('part_ways');
    await page.keyboard.press('Control+S');
    await waitInPage(() => !(document.querySelector('.tab.active')?.classList.contains('dirty')), undefined, 'the save');
    await waitLens('app/greet.py#function-part_ways');
    const lenses = await lensTexts();
    if (lenses.some((t) => t.includes('#function-farewell'))) {
      throw new Error(`a stale lens remains: ${JSON.stringify(lenses)}`);
    }
    const saved = readFileSync(join(workspace, 'app', 'greet.py'), 'utf8');
    if (!saved.includes('def part_ways(')) {
      throw new Error('the file on disk was not renamed');
    }
  });

  await test('a settings change reaches the server without a restart', async () => {
    const pids = serverPids();
    // Workspace settings: VS Code watches the workspace folder for changes.
    const settingsFile = join(workspace, '.vscode', 'settings.json');
    mkdirSync(dirname(settingsFile), { recursive: true });
    writeFileSync(settingsFile, JSON.stringify({ 'chunkls.codeLens.enabled': false }));
    await waitInPage(() => document.querySelectorAll('.codelens-decoration a').length === 0, undefined, 'the lenses to go away');
    writeFileSync(settingsFile, JSON.stringify({ 'chunkls.codeLens.enabled': true }));
    await waitLens('app/greet.py#function-greet');
    if (JSON.stringify(serverPids()) !== JSON.stringify(pids)) {
      throw new Error(`the server was restarted: ${JSON.stringify(pids)} -> ${JSON.stringify(serverPids())}`);
    }
  });

  await test('a navigation language added in the settings restarts the server once and gets hovers and F12', async () => {
    const before = serverPids();
    const settingsFile = join(workspace, '.vscode', 'settings.json');
    const defaults = ['json', 'jsonc', 'jsonl', 'markdown', 'plaintext', 'python'];
    writeFileSync(settingsFile, JSON.stringify({ 'chunkls.navigation.languages': [...defaults, 'log'] }));
    await waitHere(() => serverPids().some((pid) => !before.includes(pid)), 'a new server process');
    await waitChunkCount();
    await openFile('notes/agent.log');
    await waitHover('app/greet.py#function-shout', ['Upper-case a greeting'], 'the hover of app/greet.py#function-shout in a .log file');
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    await goToDefinition('app/greet.py#function-shout', 0, shoutLine, 'F12 in the .log file');
    // taking the language out again needs no restart (the lenses going away show
    // that the same server got the change)
    const restarted = serverPids();
    writeFileSync(settingsFile, JSON.stringify({ 'chunkls.codeLens.enabled': false }));
    await waitInPage(() => document.querySelectorAll('.codelens-decoration a').length === 0, undefined, 'the lenses to go away');
    writeFileSync(settingsFile, JSON.stringify({}));
    await waitLens('app/greet.py#function-greet');
    if (JSON.stringify(serverPids()) !== JSON.stringify(restarted)) {
      throw new Error(`removing a language restarted the server: ${JSON.stringify(restarted)} -> ${JSON.stringify(serverPids())}`);
    }
  });

  await test('clicking the status bar item opens Search Chunks', async () => {
    await page.locator('.statusbar-item', { hasText: /^\s*\d+ chunks?\s*$/ }).first().click();
    await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Search Chunks' }).waitFor({ state: 'visible', timeout });
    await page.keyboard.press('Escape');
  });

  await test('a crashed server offers Show Output and Restart, and Restart brings it back', async () => {
    const before = serverPids();
    if (before.length !== 1) {
      throw new Error(`expected one server process in the workspace, found ${JSON.stringify(before)}`);
    }
    process.kill(before[0], 'SIGKILL');
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'stopped unexpectedly' });
    await toast.waitFor({ state: 'visible', timeout });
    for (const label of ['Show Output', 'Restart']) {
      await toast.locator('.monaco-button', { hasText: label }).first().waitFor({ state: 'visible', timeout });
    }
    const meanwhile = serverPids().filter((p) => p !== before[0]);
    if (meanwhile.length > 0) {
      throw new Error(`the client restarted the server by itself: ${JSON.stringify(meanwhile)}`);
    }
    await toast.locator('.monaco-button', { hasText: 'Restart' }).first().click();
    await waitChunkCount();
    await waitLens('app/greet.py#function-greet');
    const after = serverPids();
    if (after.length !== 1 || after[0] === before[0]) {
      throw new Error(`expected one new server process, found ${JSON.stringify(after)}`);
    }
  });

  await test('the server runs on the interpreter from chunkls.server.pythonPath', async () => {
    const files = findLogs(join(userData, 'logs'));
    const lines = files.flatMap((f) => readFileSync(f, 'utf8').split('\n')).filter((l) => l.includes('Using Python'));
    if (lines.length < 2 || !lines.every((l) => l.includes(`at ${python} (from setting)`))) {
      throw new Error(`expected every start to use ${python} from the setting: ${JSON.stringify(lines)}`);
    }
  });

  await terminalTests({ page, test, shot, waitInPage, waitHover, runCommand, openFile, waitActiveTab, waitCursorLine, textPosition, timeout, lineOf });
  await mcpScenarios({ test, page, runCommand, log, timeout, userData, workspace, python, bundledLibs, shot });
} catch (error) {
  failed++;
  log(`e2e harness error: ${error && error.stack ? error.stack : error}`);
  mkdirSync(failureDir, { recursive: true });
  await page?.screenshot({ path: join(failureDir, 'harness.png') }).catch(() => undefined);
} finally {
  await browser?.close().catch(() => undefined);
  cleanup();
  if (failed > 0) {
    // The extension's output channel (LogOutputChannel) and the server's stderr end up here.
    for (const file of findLogs(join(userData, 'logs'))) {
      console.log(`----- ${file} (last 60 lines)`);
      console.log(readFileSync(file, 'utf8').split('\n').slice(-60).join('\n'));
    }
    console.log(`----- code-server output (last 30 lines)\n${csOutput.split('\n').slice(-30).join('\n')}`);
  }
  if (process.env.CHUNKLS_E2E_KEEP === '1') {
    log(`kept ${scratch}`);
  } else {
    rmSync(scratch, { recursive: true, force: true });
  }
  log(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}
finish(passed, failed);
