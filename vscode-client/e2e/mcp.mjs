// The MCP scenarios of the real-VS Code run (run.mjs calls mcpScenarios at its end).
//
// 1. The extension's provider is registered and VS Code asks it for servers: the
//    chunkls output channel logs the definition it offered, and that exact command
//    (the bundled server, with the client's PYTHONPATH) answers `tools/list` with
//    the four tools.
// 2. VS Code itself starts the server and lists its tools, where this build of
//    VS Code offers MCP: "MCP: List Servers" -> chunkls -> "Start Server", then a
//    `chunkls mcp` process runs in the workspace and VS Code's "MCP: chunkls" output
//    says "Discovered 4 tools" (code-server 4.139.1 does; VS Code's MCP support is
//    an AI feature, so run.mjs leaves chat.disableAIFeatures off). A build without
//    the command fails with the palette's answer as evidence.
// 3. VS Code shows the chunks as MCP resources ("MCP: Browse Resources"): the
//    template "Chunk by ID" and each chunk by its ID and URI; a chunk picked opens
//    with its text; the template, filled by completion, opens another; a chunk
//    attached to the chat shows in the chat's input.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { chunklsPids } from './processes.mjs';

const TOOLS = ['search_chunks', 'read_chunk', 'outline', 'check_citations'];

/** Every `*.log` file under `dir` whose text holds `needle`, with its text. */
function logsWith(dir, needle) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, name.name);
      if (name.isDirectory()) {
        walk(full);
      } else if (name.name.endsWith('.log')) {
        const text = readFileSync(full, 'utf8');
        if (text.includes(needle)) {
          out.push({ file: full, text });
        }
      }
    }
  };
  walk(dir);
  return out;
}

/** Runs a stdio MCP server, initializes it and returns the names of its tools. */
function listTools(command, args, env, cwd, timeoutMs) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no tools/list answer in ${timeoutMs} ms; stderr: ${err.slice(-800)}`));
    }, timeoutMs);
    const send = (message) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    child.stderr.on('data', (d) => (err += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.stdout.on('data', (d) => {
      out += d;
      let newline;
      while ((newline = out.indexOf('\n')) >= 0) {
        const message = JSON.parse(out.slice(0, newline));
        out = out.slice(newline + 1);
        if (message.id === 1) {
          send({ method: 'notifications/initialized' });
          send({ id: 2, method: 'tools/list', params: {} });
        } else if (message.id === 2) {
          clearTimeout(timer);
          child.stdin.end();
          resolve(message.result.tools.map((tool) => tool.name));
        }
      }
    });
    send({
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '0' } },
    });
  });
}

/**
 * @param {object} ctx what run.mjs has: test, page, runCommand, log, timeout,
 *   userData, workspace, python, bundledLibs (the PYTHONPATH the client builds)
 */
export async function mcpScenarios(ctx) {
  const { test, page, runCommand, log, timeout, userData, workspace, python, bundledLibs, shot } = ctx;

  await test('the extension offers its bundled MCP server to VS Code', async () => {
    const needle = 'Offering the chunkls MCP server: ';
    const deadline = Date.now() + timeout;
    let found = [];
    while (found.length === 0 && Date.now() < deadline) {
      found = logsWith(join(userData, 'logs'), needle);
      if (found.length === 0) {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    if (found.length === 0) {
      throw new Error('VS Code never asked the provider for MCP servers (no "Offering the chunkls MCP server" in the logs)');
    }
    const line = found[0].text.split('\n').find((l) => l.includes(needle));
    const offered = line.slice(line.indexOf(needle) + needle.length).trim().split(' ');
    const expected = [python, '-m', 'chunkls', 'mcp', '--root', workspace];
    if (JSON.stringify(offered) !== JSON.stringify(expected)) {
      throw new Error(`offered ${JSON.stringify(offered)}, expected ${JSON.stringify(expected)}`);
    }
    const env = { ...process.env, PYTHONPATH: bundledLibs, XDG_CACHE_HOME: join(userData, 'mcp-cache') };
    const tools = await listTools(offered[0], offered.slice(1), env, workspace, 60000);
    if (JSON.stringify(tools) !== JSON.stringify(TOOLS)) {
      throw new Error(`the offered server lists ${JSON.stringify(tools)}`);
    }
  });

  /**
   * Clicks a picker row. The mouse first leaves the picker: a tooltip left over from
   * the palette's previous item (a hover) would otherwise take the click.
   */
  const clickRow = async (target) => {
    await target.waitFor({ state: 'visible', timeout });
    await page.mouse.move(5, 5);
    await page
      .locator('.context-view .hover-contents')
      .first()
      .waitFor({ state: 'hidden', timeout: 5000 })
      .catch(() => undefined);
    await target.click();
  };

  await test('VS Code starts the chunkls MCP server and lists its tools', async () => {
    try {
      await runCommand('MCP: List Servers');
    } catch (error) {
      const rows = await page
        .locator('.quick-input-list .monaco-list-row')
        .allTextContents()
        .catch(() => []);
      await page.keyboard.press('Escape').catch(() => undefined);
      log(`  evidence: the command palette has no "MCP: List Servers" (rows: ${JSON.stringify(rows.slice(0, 5))})`);
      throw new Error(`this VS Code build offers no MCP commands: ${error.message.split('\n')[0]}`);
    }
    await clickRow(page.locator('.quick-input-list .monaco-list-row', { hasText: 'chunkls' }).first());
    await clickRow(page.locator('.quick-input-list .monaco-list-row', { hasText: 'Start Server' }).first());
    // VS Code shows its "MCP: chunkls" output channel: the process starts, answers
    // initialize and tools/list ("Discovered 4 tools")
    await page
      .waitForFunction((want) => document.body.innerText.replace(/\u00a0/g, ' ').includes(want), `Discovered ${TOOLS.length} tools`, {
        timeout: timeout * 2,
        polling: 250,
      })
      .catch((e) => {
        throw new Error(`VS Code's MCP output never said "Discovered ${TOOLS.length} tools": ${e.message.split('\n')[0]}`);
      });
    const pids = chunklsPids('mcp', workspace);
    if (pids.length === 0) {
      throw new Error('no chunkls mcp process runs in the workspace');
    }
    log(`  VS Code started chunkls mcp (pid ${pids.join(', ')}) and discovered its ${TOOLS.length} tools`);
  });

  const input = page.locator('.quick-input-widget input');
  const row = (text) => page.locator('.quick-input-list .monaco-list-row', { hasText: text }).first();
  /** Types `typed` after the picker's own prefix ("mcpr "; the picker keeps what was typed last). */
  const filter = async (typed) => {
    const prefix = /^\S+\s/.exec(await input.inputValue())?.[0] ?? '';
    await input.fill(`${prefix}${typed}`);
  };
  /** "MCP: Browse Resources", then `typed`. */
  const browse = async (typed) => {
    await runCommand('MCP: Browse Resources');
    await filter('');
    await row('Chunk by ID').waitFor({ state: 'visible', timeout });
    await filter(typed);
  };
  /** The active editor tab is `name` and shows `text`. */
  const opened = async (name, text) => {
    await page
      .waitForFunction(
        ([tab, want]) =>
          (document.querySelector('.tab.active')?.textContent || '').includes(tab) &&
          [...document.querySelectorAll('.editor-instance .view-lines')].some((v) => v.textContent.replace(/\u00a0/g, ' ').includes(want)),
        [name, text],
        { timeout, polling: 100 },
      )
      .catch((e) => {
        throw new Error(`no tab ${name} showing ${JSON.stringify(text)}: ${e.message.split('\n')[0]}`);
      });
  };

  await test('VS Code lists the chunks as MCP resources and opens one with its text', async () => {
    await browse('');
    const listed = row('app/greet.py#function-greet');
    await listed.waitFor({ state: 'visible', timeout });
    const shown = await listed.textContent();
    if (!shown.includes('chunkls:///app/greet.py%23function-greet') || !shown.includes('app/greet.py:4-6')) {
      throw new Error(`the resource row shows ${JSON.stringify(shown)}`);
    }
    await shot?.('mcp-resources');
    await filter('greet');
    await clickRow(row('app/greet.py#function-greet'));
    await opened('greet.py#function-greet', 'Say hello to someone by name');
  });

  await test('VS Code fills the chunk template by completion and opens the chunk', async () => {
    await browse('Chunk by ID');
    await clickRow(row('Chunk by ID'));
    await page.keyboard.type('app/greet.py#fun');
    const proposed = row('app/greet.py#function-shout');
    await clickRow(proposed);
    await opened('greet.py#function-shout', 'text.upper()');
  });

  await test('a chunk attached to the chat from the resources shows in its input', async () => {
    await browse('greet');
    const listed = row('app/greet.py#function-greet');
    await listed.waitFor({ state: 'visible', timeout });
    await listed.hover();
    await listed.locator('.action-label[aria-label="Attach to chat"], .action-label[title="Attach to chat"]').first().click();
    await page
      .waitForFunction(
        () => [...document.querySelectorAll('.interactive-input-part, .chat-input-container, .part.auxiliarybar')].some((e) => (e.textContent || '').includes('greet.py#function-greet')),
        undefined,
        { timeout, polling: 100 },
      )
      .catch((e) => {
        throw new Error(`the chat's input shows no attached chunk: ${e.message.split('\n')[0]}`);
      });
    await shot?.('mcp-resource-attached');
    log('  the chat input holds greet.py#function-greet (sending it needs a model: not done here)');
  });
}
