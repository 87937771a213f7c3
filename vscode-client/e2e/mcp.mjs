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
  const { test, page, runCommand, log, timeout, userData, workspace, python, bundledLibs } = ctx;

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
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'chunkls' }).first();
    await row.waitFor({ state: 'visible', timeout });
    await row.click();
    const start = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Start Server' }).first();
    await start.waitFor({ state: 'visible', timeout });
    await start.click();
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
}
