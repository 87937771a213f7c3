/** Status bar text for the server's `chunkls/status` notification. */

export interface IndexStatus {
  indexing: boolean;
  chunks: number;
  files: number;
  skipped: number;
}

export function parseStatus(raw: unknown): IndexStatus | undefined {
  if (typeof raw !== 'object' || raw === null) {
    return undefined;
  }
  const r = raw as Record<string, unknown>;
  const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
  return { indexing: r.indexing === true, chunks: num(r.chunks), files: num(r.files), skipped: num(r.skipped) };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export interface StatusView {
  text: string;
  tooltip: string;
}

export type ClientPhase = 'starting' | 'running' | 'stopped' | 'failed';

export function statusView(phase: ClientPhase, status: IndexStatus | undefined): StatusView {
  if (phase === 'failed') {
    return { text: '$(error) chunks', tooltip: 'chunkls: the language server is not running. Click to show the output.' };
  }
  if (phase === 'stopped') {
    return { text: '$(circle-slash) chunks', tooltip: 'chunkls: the language server is stopped.' };
  }
  if (phase === 'starting' || status === undefined) {
    return { text: '$(sync~spin) chunks', tooltip: 'chunkls: starting the language server…' };
  }
  if (status.indexing) {
    return {
      text: `$(sync~spin) ${plural(status.chunks, 'chunk')}`,
      tooltip: `chunkls: indexing… ${plural(status.chunks, 'chunk')} in ${plural(status.files, 'file')} so far`,
    };
  }
  const skipped = status.skipped > 0 ? `, ${plural(status.skipped, 'file')} skipped` : '';
  return {
    text: `$(symbol-namespace) ${plural(status.chunks, 'chunk')}`,
    tooltip: `chunkls: ${plural(status.chunks, 'chunk')} in ${plural(status.files, 'file')}${skipped}. Click to search chunks.`,
  };
}
