import * as vscode from 'vscode';
import { ServerCommands } from './constants';
import { chunkAtArguments, chunkIdArgument } from './launch';
import type { ServerManager } from './server';

/** The terminal an ID is typed into: the active one, else the first, else a new one. */
function targetTerminal(): vscode.Terminal {
  return vscode.window.activeTerminal ?? vscode.window.terminals[0] ?? vscode.window.createTerminal();
}

/** The chunk ID at the active editor's cursor, asked of the server (undefined: none, with a message). */
async function chunkIdAtCursor(server: ServerManager): Promise<string | undefined> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined) {
    vscode.window.setStatusBarMessage('$(info) No editor: open a file to send the chunk ID at the cursor', 4000);
    return undefined;
  }
  try {
    const args = chunkAtArguments(server.converters().c2p.asUri(editor.document.uri), editor.selection.active.line);
    const chunkId = chunkIdArgument(await server.executeCommand<unknown>(ServerCommands.chunkAt, args));
    if (chunkId === undefined) {
      vscode.window.setStatusBarMessage('$(info) No chunk at the cursor', 4000);
    }
    return chunkId;
  } catch (error) {
    void vscode.window.showWarningMessage(`Send Chunk ID to Terminal: ${error instanceof Error ? error.message : String(error)}`);
    return undefined;
  }
}

/** Types a chunk ID into a terminal (no Enter: it goes into an agent's prompt) and focuses it. */
export function typeIntoTerminal(chunkId: string): void {
  const terminal = targetTerminal();
  terminal.show(false);
  terminal.sendText(chunkId, false);
  vscode.window.setStatusBarMessage(`$(terminal) Sent chunk ID ${chunkId} to ${terminal.name}`, 4000);
}

/**
 * Send Chunk ID to Terminal: the argument's ID (a Search Chunks item), else
 * the chunk at the cursor (the palette, the editor's context menu, which
 * passes the document's URI).
 */
export async function sendChunkIdToTerminal(server: ServerManager, arg: unknown): Promise<void> {
  const chunkId = chunkIdArgument(arg) ?? (await chunkIdAtCursor(server));
  if (chunkId !== undefined) {
    typeIntoTerminal(chunkId);
  }
}
