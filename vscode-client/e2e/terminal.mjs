// Terminal links and JSON Lines transcripts in a real VS Code (code-server),
// run by run.mjs after its own tests. Chunk IDs printed in the integrated
// terminal (by printf with colours, wrapped over two rows, and by a real
// `chunkls search`) must be links whose tooltip names the chunk and whose
// Ctrl+click opens it; an agent's JSONL session log gets hover and F12.
//
// Facts this relies on (vscode-client/e2e's notes): with GPU acceleration off
// xterm renders DOM rows under `.terminal-wrapper.active .xterm-rows`, spaces
// as U+00A0; hovering needs a real mouse move onto the text; the tooltip is
// `.monaco-hover.workbench-hover.xterm-hover`.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** User settings the terminal tests need: DOM rendering, bash, `chunkls` on PATH. */
export function terminalSettings(binDir) {
  return {
    'terminal.integrated.gpuAcceleration': 'off',
    'terminal.integrated.defaultProfile.linux': 'bash',
    'terminal.integrated.env.linux': { PATH: `${binDir}:\${env:PATH}` },
    'terminal.integrated.enablePersistentSessions': false,
    'terminal.integrated.shellIntegration.enabled': true,
  };
}

/** A `chunkls` command for the terminal: the interpreter and bundled libraries the extension runs the server with. */
export function writeChunklsWrapper(binDir, python, pythonPath) {
  mkdirSync(binDir, { recursive: true });
  const wrapper = join(binDir, 'chunkls');
  writeFileSync(wrapper, `#!/bin/sh\nPYTHONPATH='${pythonPath}' exec '${python}' -m chunkls "$@"\n`);
  chmodSync(wrapper, 0o755);
  return wrapper;
}

/** Runs the terminal and JSONL tests with run.mjs's helpers. */
export async function terminalTests(h) {
  const { page, test, shot, waitInPage, waitHover, runCommand, openFile, waitActiveTab, waitCursorLine, textPosition, timeout, lineOf } = h;
  const shoutLine = lineOf('app/greet.py', 'def shout');
  const greetLine = lineOf('app/greet.py', 'def greet');

  /** The text of the active terminal's rows (U+00A0 as spaces). */
  const rows = () =>
    page.evaluate(() =>
      [...document.querySelectorAll('.terminal-wrapper.active .xterm-rows > div')].map((r) => (r.textContent || '').replace(/\u00a0/g, ' ')),
    );

  /** Screen coordinates of the middle of `needle`'s last occurrence in the terminal rows (`inside`: character offset into it). */
  const terminalPosition = (needle, inside) =>
    waitInPage(
      ([want, at]) => {
        const divs = [...document.querySelectorAll('.terminal-wrapper.active .xterm-rows > div')];
        for (let i = divs.length - 1; i >= 0; i--) {
          const row = divs[i];
          const text = (row.textContent || '').replace(/\u00a0/g, ' ');
          const found = text.lastIndexOf(want);
          if (found < 0) {
            continue;
          }
          const target = found + (at ?? Math.floor(want.length / 2));
          const walker = document.createTreeWalker(row, NodeFilter.SHOW_TEXT);
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
        return null;
      },
      [needle, inside],
      `the text ${needle} in the terminal`,
    );

  /** Types a command line into the terminal and runs it (focused by a click in its empty bottom corner, away from links and tooltips). */
  const runInTerminal = async (line) => {
    // (no Escape: in the terminal it reaches bash, whose readline reads ESC + the next key as Meta)
    await page.mouse.move(5, 5);
    const screen = page.locator('.terminal-wrapper.active .xterm-screen');
    await screen.waitFor({ state: 'visible', timeout });
    const box = await screen.boundingBox();
    await screen.click({ position: { x: box.width - 15, y: box.height - 8 } });
    await waitInPage(() => document.activeElement?.classList.contains('xterm-helper-textarea'), undefined, 'the focus in the terminal');
    await page.keyboard.type(line, { delay: 5 });
    await page.keyboard.press('Enter');
  };

  /** Moves the mouse onto a terminal text (from elsewhere) until the link tooltip with `want` shows. */
  const hoverLink = async (needle, want, inside) => {
    const deadline = Date.now() + timeout;
    for (;;) {
      const pos = await terminalPosition(needle, inside);
      await page.mouse.move(pos.x - 60, pos.y - 40);
      await page.mouse.move(pos.x, pos.y, { steps: 5 });
      const shown = await page
        .waitForFunction(
          // shown: the hover with the text has a box of some size (the terminal's has no offsetParent)
          (text) =>
            [...document.querySelectorAll('.monaco-hover')].some(
              (h) =>
                (h.textContent || '').replace(/\s+/g, ' ').includes(text) && // U+00A0 in the tooltip
                [h, ...h.querySelectorAll('*')].some((e) => {
                  const r = e.getBoundingClientRect();
                  return r.width > 0 && r.height > 0;
                }),
            ),
          want,
          { timeout: 4000, polling: 100 },
        )
        .then(() => true, () => false);
      if (shown) {
        return pos;
      }
      if (Date.now() > deadline) {
        const hovers = await page.evaluate(() =>
          [...document.querySelectorAll('.monaco-hover')].map((e) => {
            const r = e.getBoundingClientRect();
            const style = getComputedStyle(e);
            return `${(e.textContent || '').slice(0, 80)} [${e.className}] ${r.x},${r.y} ${r.width}x${r.height} ${style.display} ${style.visibility}`;
          }),
        );
        throw new Error(`no link tooltip "${want}" over ${needle}; hovers: ${JSON.stringify(hovers)}; rows: ${JSON.stringify((await rows()).filter((r) => r.trim()))}`);
      }
    }
  };

  const ctrlClick = async (pos) => {
    await page.keyboard.down('Control');
    await page.mouse.click(pos.x, pos.y);
    await page.keyboard.up('Control');
  };

  await test('a terminal opens with a shell prompt', async () => {
    await page.keyboard.press('Escape');
    await runCommand('Terminal: Create New Terminal');
    await page.locator('.terminal-wrapper.active .xterm-rows').waitFor({ state: 'visible', timeout });
    // bash's prompt ends in "$ " (or "# " as root)
    await waitInPage(
      () => [...document.querySelectorAll('.terminal-wrapper.active .xterm-rows > div')].some((r) => /[$#]$/.test((r.textContent || '').replace(/\u00a0/g, ' ').trim())),
      undefined,
      'a shell prompt in the terminal',
    );
  });

  await test('an ID printed in colour in the terminal is a link to its chunk', async () => {
    await runInTerminal(String.raw`printf '\033[1;36m%s\033[0m \033[2m(printed)\033[0m\n' app/greet.py#function-shout`);
    await waitInPage(
      () => [...document.querySelectorAll('.terminal-wrapper.active .xterm-rows > div')].some((r) => (r.textContent || '').replace(/\u00a0/g, ' ').includes('app/greet.py#function-shout (printed)')),
      undefined,
      'the printed ID',
    );
    const pos = await hoverLink('app/greet.py#function-shout (printed)', 'Open chunk app/greet.py#function-shout: app/greet.py, lines', 8);
    await shot('terminal-link');
    await ctrlClick(pos);
    await waitActiveTab('greet.py');
    await waitCursorLine(shoutLine, 'Ctrl+click on the terminal link');
  });

  await test('an ID wrapped over two terminal rows is one link', async () => {
    // the ID starts 12 columns before the end of a row: "app/greet.py" ends it, "#function-greet" starts the next
    await runInTerminal(String.raw`printf '%*s%s\n' $(( $(tput cols) - 12 )) '>' app/greet.py#function-greet`);
    await waitInPage(
      () => [...document.querySelectorAll('.terminal-wrapper.active .xterm-rows > div')].some((r) => (r.textContent || '').replace(/\u00a0/g, ' ').trim() === '#function-greet'),
      undefined,
      'the wrapped ID (its tail alone on a row)',
    ).catch(async (e) => {
      throw new Error(`${e.message}; rows: ${JSON.stringify((await rows()).filter((r) => r.trim()))}`);
    });
    // hover the tail on the second row: the link covers both rows
    const pos = await hoverLink('#function-greet', 'Open chunk app/greet.py#function-greet', 5);
    await ctrlClick(pos);
    await waitActiveTab('greet.py');
    await waitCursorLine(greetLine, 'Ctrl+click on the wrapped link');
  });

  await test('IDs printed by `chunkls search` in the terminal are links', async () => {
    await runInTerminal('clear; chunkls search "upper-case emphasis" --top-k 2');
    const want = 'app/greet.py#function-shout (';  // (the mode that ranked it follows)
    await waitInPage(
      (text) => [...document.querySelectorAll('.terminal-wrapper.active .xterm-rows > div')].some((r) => (r.textContent || '').replace(/\u00a0/g, ' ').includes(text)),
      want,
      'the `chunkls search` result',
    ).catch(async (e) => {
      throw new Error(`${e.message}; rows: ${JSON.stringify((await rows()).filter((r) => r.trim()))}`);
    });
    const pos = await hoverLink(want, 'Open chunk app/greet.py#function-shout', 5);
    await shot('terminal-search-link');
    await ctrlClick(pos);
    await waitActiveTab('greet.py');
    await waitCursorLine(shoutLine, 'Ctrl+click on the `chunkls search` result');
  });

  await test('Send Chunk ID to Terminal types the ID of the chunk at the cursor at the prompt', async () => {
    // the cursor is in greet.py on function shout (the link just followed)
    await waitActiveTab('greet.py');
    await runCommand('Chunks: Send Chunk ID to Terminal');
    await waitInPage(
      () => [...document.querySelectorAll('.terminal-wrapper.active .xterm-rows > div')].some((r) => /[$#] app\/greet\.py#function-shout$/.test((r.textContent || '').replace(/\u00a0/g, ' ').trim())),
      undefined,
      'the chunk ID typed at the prompt',
    ).catch(async (e) => {
      throw new Error(`${e.message}; rows: ${JSON.stringify((await rows()).filter((r) => r.trim()))}`);
    });
    await page.keyboard.press('Control+U'); // not run: clear the prompt
  });

  await test('hover and F12 work in a JSONL session log', async () => {
    await openFile('notes/session.jsonl');
    const needle = 'app\\/greet.py#function-shout';
    await waitHover(needle, ['Upper-case a greeting'], 'the hover of app/greet.py#function-shout in the JSONL log');
    await shot('jsonl-hover');
    await page.mouse.move(5, 5);
    await page.keyboard.press('Escape');
    const pos = await textPosition(needle, 0);
    await page.mouse.click(pos.x, pos.y);
    await page.keyboard.press('F12');
    await waitActiveTab('greet.py');
    await waitCursorLine(shoutLine, 'F12 in the JSONL log');
  });
}
