import * as vscode from 'vscode';
import { ServerCommands } from './constants';
import { openChunk } from './commands';
import type { ServerManager } from './server';
import {
  lineForServer,
  lineLinks,
  mayHoldChunkId,
  parseResolvedSpans,
  type RecentAnswers,
  resolveTextArguments,
  type ChunkTarget,
  type LineLink,
  type ResolvedSpan,
} from './terminalText';

/** A chunk ID link in the integrated terminal. */
export interface ChunkTerminalLink extends vscode.TerminalLink {
  readonly target: ChunkTarget;
}

/** The working directory of a terminal, as a URI string, if VS Code knows it. */
function terminalCwd(terminal: vscode.Terminal): vscode.Uri | undefined {
  const fromShell = terminal.shellIntegration?.cwd;
  if (fromShell !== undefined) {
    return fromShell;
  }
  const options = terminal.creationOptions;
  const cwd = 'cwd' in options ? options.cwd : undefined;
  if (typeof cwd === 'string') {
    return vscode.Uri.file(cwd);
  }
  return cwd;
}

/**
 * Chunk IDs printed in the integrated terminal become links: VS Code asks for
 * the links of a line when the mouse comes over it; the line (when it holds a
 * `#`) goes to the server in one `chunkls.resolve` request, which answers the
 * IDs that resolve, against the workspace folder of the terminal's working
 * directory first. Answers are remembered per line until the index changes.
 * A fast-printing terminal costs nothing: VS Code asks only for the lines under
 * the mouse, and each costs at most one request of `TERMINAL_LINE_MAX` code
 * units, answered with at most `TERMINAL_LINKS_MAX` links.
 */
export class ChunkTerminalLinkProvider implements vscode.TerminalLinkProvider<ChunkTerminalLink> {
  constructor(
    private readonly server: ServerManager,
    private readonly output: vscode.LogOutputChannel,
    /** Answers per line (text and folder); the owner clears them when the index changes. */
    private readonly answers: RecentAnswers<ResolvedSpan[]>,
  ) {}

  async provideTerminalLinks(context: vscode.TerminalLinkContext, token: vscode.CancellationToken): Promise<ChunkTerminalLink[]> {
    if (!mayHoldChunkId(context.line) || !this.server.isRunning) {
      return [];
    }
    const { text, offsets } = lineForServer(context.line);
    const cwd = terminalCwd(context.terminal);
    const folder = cwd !== undefined ? vscode.workspace.getWorkspaceFolder(cwd)?.uri : undefined;
    const folderUri = folder !== undefined ? this.server.converters().c2p.asUri(folder) : undefined;
    const key = `${folderUri ?? ''}\u0000${text}`;
    let spans = this.answers.get(key);
    if (spans === undefined) {
      try {
        const raw = await this.server.executeCommand<unknown>(ServerCommands.resolve, resolveTextArguments(text, folderUri), token);
        spans = parseResolvedSpans(raw);
      } catch (error) {
        this.output.debug(`${ServerCommands.resolve} for a terminal line: ${String(error)}`);
        return [];
      }
      this.answers.set(key, spans); // kept even when this request was cancelled: the next asks again
      if (token.isCancellationRequested) {
        return [];
      }
    }
    return lineLinks(spans, offsets).map((link: LineLink) =>
      Object.assign(new vscode.TerminalLink(link.startIndex, link.length, link.tooltip), { target: link.target }),
    );
  }

  async handleTerminalLink(link: ChunkTerminalLink): Promise<void> {
    try {
      await openChunk(this.server, link.target);
    } catch (error) {
      void vscode.window.showErrorMessage(`Cannot open ${link.target.chunkId}: ${String(error)}`);
    }
  }
}
