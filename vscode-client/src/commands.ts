import * as vscode from 'vscode';
import { SEARCH_DEBOUNCE_MS, SEARCH_TOP_K, ServerCommands } from './constants';
import {
  acceptedResult,
  jumpTargetArguments,
  LatestSearch,
  NO_TERMS_LABEL,
  noticeItem,
  parseJumpTarget,
  parseSearchAnswer,
  resultItems,
  searchArguments,
  type ParsedAnswer,
  type SearchPickItem,
  type SearchResult,
} from './search';
import { chunkAtArguments, chunkIdArgument } from './launch';
import type { ServerManager } from './server';
import { parseReferencesArguments } from './references';
import { typeIntoTerminal } from './sendToTerminal';

const COPY_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('copy'),
  tooltip: 'Copy Chunk ID',
};

const TERMINAL_BUTTON: vscode.QuickInputButton = {
  iconPath: new vscode.ThemeIcon('terminal'),
  tooltip: 'Send Chunk ID to Terminal',
};

export async function copyToClipboard(chunkId: string): Promise<void> {
  await vscode.env.clipboard.writeText(chunkId);
  vscode.window.setStatusBarMessage(`$(clippy) Copied chunk ID ${chunkId}`, 4000);
}

/** Copy Chunk ID: the lens's argument, else the chunk at the cursor (asked of the server). */
export async function copyChunkId(server: ServerManager, arg: unknown): Promise<void> {
  const fromArg = chunkIdArgument(arg);
  if (fromArg !== undefined) {
    await copyToClipboard(fromArg);
    return;
  }
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    vscode.window.setStatusBarMessage('$(info) No editor: open a file to copy the chunk ID at the cursor', 4000);
    return;
  }
  let answer: unknown;
  try {
    const args = chunkAtArguments(server.converters().c2p.asUri(editor.document.uri), editor.selection.active.line);
    answer = await server.executeCommand<unknown>(ServerCommands.chunkAt, args);
  } catch (error) {
    void vscode.window.showWarningMessage(`Copy Chunk ID: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  const chunkId = chunkIdArgument(answer);
  if (chunkId === undefined) {
    vscode.window.setStatusBarMessage('$(info) No chunk at the cursor', 4000);
    return;
  }
  await copyToClipboard(chunkId);
}

/** Opens the chunk's file with its range selected (cursor at its start) and revealed. */
export async function openChunk(server: ServerManager, result: Pick<SearchResult, 'uri' | 'range'>): Promise<void> {
  const { p2c } = server.converters();
  const range = p2c.asRange(result.range);
  const editor = await vscode.window.showTextDocument(p2c.asUri(result.uri), { preview: false });
  editor.selection = new vscode.Selection(range.end, range.start);
  editor.revealRange(range, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/**
 * Where a Search Chunks result opens: its best part for the query it was listed for.
 * The palette lists results without parts (as you type, one is opened); this asks the
 * server for the one opened, and falls back to the whole chunk's range.
 */
async function withJumpTarget(
  server: ServerManager,
  output: vscode.LogOutputChannel,
  query: string,
  result: SearchResult,
): Promise<SearchResult> {
  const asked = jumpTargetArguments(query, result);
  if (asked === undefined) {
    return result;
  }
  try {
    const range = parseJumpTarget(await server.executeCommand<unknown>(ServerCommands.jumpTarget, asked));
    return range === undefined ? result : { ...result, range };
  } catch (error) {
    output.warn(`${ServerCommands.jumpTarget} ${result.chunkId}: ${String(error)}`);
    return result;
  }
}

/** Search Chunks: a QuickPick that asks the server as you type. */
export function searchChunks(server: ServerManager, output: vscode.LogOutputChannel): void {
  const pick = vscode.window.createQuickPick<SearchPickItem>();
  pick.title = 'Search Chunks';
  pick.placeholder = 'Type to search the workspace chunks (Enter opens; the buttons copy the ID, or type it into the terminal)';
  pick.matchOnDescription = false;
  pick.matchOnDetail = false;
  const disposables: vscode.Disposable[] = [];
  /** The query the items shown were listed for. */
  let listedFor = '';

  const search = new LatestSearch<ParsedAnswer>(
    {
      run: async (query, signal) => {
        const cts = new vscode.CancellationTokenSource();
        const onAbort = (): void => cts.cancel();
        signal.addEventListener('abort', onAbort);
        try {
          const raw = await server.executeCommand<unknown>(ServerCommands.search, searchArguments(query, SEARCH_TOP_K), cts.token);
          return parseSearchAnswer(raw);
        } finally {
          signal.removeEventListener('abort', onAbort);
          cts.dispose();
        }
      },
      onResult: (query, { results, reason }) => {
        listedFor = query;
        pick.items = resultItems(results, reason).map((item) => (item.result !== undefined ? { ...item, buttons: [COPY_BUTTON, TERMINAL_BUTTON] } : item));
      },
      onError: (query, error) => {
        output.warn(`${ServerCommands.search} ${JSON.stringify(query)}: ${String(error)}`);
        pick.items = [];
        pick.placeholder = `Search failed: ${error instanceof Error ? error.message : String(error)}`;
      },
      onBusy: (busy) => {
        pick.busy = busy;
      },
      onEmpty: () => {
        pick.items = [];
      },
      onNoTerms: () => {
        pick.items = [noticeItem(NO_TERMS_LABEL, 'type a word')];
      },
    },
    SEARCH_DEBOUNCE_MS,
  );

  disposables.push(
    pick.onDidChangeValue((value) => search.update(value)),
    pick.onDidTriggerItemButton((e) => {
      const result = acceptedResult(e.item);
      if (result === undefined) {
        return;
      }
      if (e.button === TERMINAL_BUTTON) {
        pick.hide();
        typeIntoTerminal(result.chunkId);
      } else {
        void copyToClipboard(result.chunkId);
      }
    }),
    pick.onDidAccept(() => {
      const result = acceptedResult(pick.selectedItems[0] ?? pick.activeItems[0]);
      if (result === undefined) {
        return;
      }
      pick.hide();
      void withJumpTarget(server, output, listedFor, result)
        .then((target) => openChunk(server, target))
        .catch((error: unknown) => {
          void vscode.window.showErrorMessage(`Cannot open ${result.uri}: ${String(error)}`);
        });
    }),
    pick.onDidHide(() => {
      search.dispose();
      for (const d of disposables) {
        d.dispose();
      }
      pick.dispose();
    }),
  );
  pick.show();
}

/** The "cited by N" lens: show the citing places in VS Code's references view. */
export async function showReferences(server: ServerManager, ...args: unknown[]): Promise<void> {
  const parsed = parseReferencesArguments(args);
  if (parsed === undefined) {
    return;
  }
  const { p2c } = server.converters();
  await vscode.commands.executeCommand(
    'editor.action.showReferences',
    p2c.asUri(parsed.uri),
    p2c.asPosition(parsed.position),
    parsed.locations.map((location) => p2c.asLocation(location)),
  );
}
