import * as vscode from 'vscode';
import { Commands, OUTPUT_CHANNEL_NAME, STATUS_ITEM_ID } from './constants';
import { copyChunkId, searchChunks, showReferences } from './commands';
import { onActiveInterpreterChanged } from './pythonExtension';
import { registerMcpServer } from './mcp';
import { ServerManager } from './server';
import { statusView, type ClientPhase, type IndexStatus } from './status';

let server: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const output = vscode.window.createOutputChannel(OUTPUT_CHANNEL_NAME, { log: true });
  context.subscriptions.push(output);

  const statusItem = vscode.window.createStatusBarItem(STATUS_ITEM_ID, vscode.StatusBarAlignment.Left, 10);
  statusItem.name = 'chunkls';
  context.subscriptions.push(statusItem);
  let phase: ClientPhase = 'starting';
  let status: IndexStatus | undefined;
  const render = (): void => {
    const view = statusView(phase, status);
    statusItem.text = view.text;
    statusItem.tooltip = view.tooltip;
    statusItem.command = phase === 'failed' ? Commands.showOutput : Commands.searchChunks;
    statusItem.show();
  };
  render();

  const manager = new ServerManager(context, output, {
    onPhase: (next) => {
      phase = next;
      if (next !== 'running') {
        status = undefined;
      }
      render();
    },
    onStatus: (next) => {
      status = next;
      render();
    },
  });
  server = manager;
  context.subscriptions.push(manager);

  context.subscriptions.push(
    vscode.commands.registerCommand(Commands.searchChunks, () => searchChunks(manager, output)),
    vscode.commands.registerCommand(Commands.copyChunkId, (arg: unknown) => copyChunkId(manager, arg)),
    vscode.commands.registerCommand(Commands.restartServer, () => manager.restart()),
    vscode.commands.registerCommand(Commands.showOutput, () => output.show()),
    vscode.commands.registerCommand(Commands.showReferences, (...args: unknown[]) => showReferences(manager, ...args)),
  );

  // Not awaited: activation must not wait for Python or the first index.
  void manager.start();

  context.subscriptions.push(...registerMcpServer(context, output));

  // A new active environment in the Python extension matters only when the setting is empty.
  void onActiveInterpreterChanged(() => {
    if (!manager.usesSetting()) {
      output.info('The Python extension changed its active environment: restarting the server');
      void manager.restart();
    }
  }).then((disposable) => {
    if (disposable !== undefined) {
      context.subscriptions.push(disposable);
    }
  });
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
