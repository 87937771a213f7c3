/** Search Chunks logic that does not need VS Code: result parsing, QuickPick items, debouncing. */

import { Range } from 'vscode-languageserver-protocol';

/** One element of the server's `chunkls.search` answer. */
export interface SearchResult {
  chunkId: string;
  score: number;
  /** The search mode that ranked it (`hybrid`, `bm25`); older servers send none. */
  mode?: string;
  uri: string;
  range: Range;
  /** The best part's first and last line; null when listed without parts (ask `jumpTarget`). */
  lines?: [number, number] | null;
  preview: string;
}

/** The `chunkls.search` argument the palette sends. */
export interface SearchArguments {
  query: string;
  topK: number;
  /** Ask for a SearchAnswer (the results and why there are none), not the bare list. */
  withReason: boolean;
  /**
   * Whether each result comes with its best part (the jump target). The palette sends
   * false: as you type, only the result opened needs one (`jumpTargetArguments`).
   */
  parts: boolean;
}

/** The `chunkls.jumpTarget` argument: a result listed without its part, and its query. */
export interface JumpTargetArguments {
  query: string;
  chunkId: string;
  uri: string;
  /** The result's first line (0-based), which tells chunks of one ID apart. */
  line: number;
  mode?: string;
}

/** The server's `chunkls.search` answer when asked withReason (the server's SearchAnswer). */
export interface SearchAnswer {
  results: SearchResult[];
  mode: string;
  /** Why the query was not searched (the CLI's and MCP's words), null when it was. */
  reason: string | null;
}

/** What the palette shows of an answer: the well-formed results, and why there are none. */
export interface ParsedAnswer {
  results: SearchResult[];
  reason: string | undefined;
}

/** A QuickPick item (structurally a vscode.QuickPickItem) carrying its result. */
export interface ChunkPickItem {
  label: string;
  description: string;
  detail: string;
  /** Results are ranked by the server: QuickPick must not filter them out by label. */
  alwaysShow: true;
  result: SearchResult;
}

/** The one item shown when a query matches no chunk, or has no searchable terms; accepting it does nothing. */
export interface NoticePickItem {
  label: string;
  description: string;
  /** Shown whatever the query (QuickPick must not filter it out). */
  alwaysShow: true;
  /** No chunk to open or copy. */
  result?: undefined;
}

export type SearchPickItem = ChunkPickItem | NoticePickItem;

/** The item for a query that matches no chunk. */
export const NO_MATCH_LABEL = 'No chunks match';

/** The item for a query without a word to search for (only punctuation). */
export const NO_TERMS_LABEL = 'The query has no searchable terms';

/** True when the query has a word character to search for (the server's tokens are `\w+` runs). */
export function hasSearchableTerms(query: string): boolean {
  return /[\p{L}\p{N}_]/u.test(query);
}

/** A disabled-looking item: an icon, a muted description, nothing behind it. */
export function noticeItem(label: string, description: string): NoticePickItem {
  return { label: `$(circle-slash) ${label}`, description, alwaysShow: true };
}

/**
 * The QuickPick's items for the server's answer: its results; else, when the server
 * said why the query was not searched (only stop words), that reason; else one
 * "No chunks match" item.
 */
export function resultItems(results: readonly SearchResult[], reason?: string): SearchPickItem[] {
  if (results.length > 0) {
    return toPickItems(results);
  }
  if (reason !== undefined && reason.length > 0) {
    return [noticeItem(NO_TERMS_LABEL, reason)];
  }
  return [noticeItem(NO_MATCH_LABEL, 'try other words')];
}

/** The chunk behind an accepted item; undefined (do nothing) for a notice item or no item. */
export function acceptedResult(item: SearchPickItem | undefined): SearchResult | undefined {
  return item?.result;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

export function isSearchResult(value: unknown): value is SearchResult {
  return (
    isObject(value) &&
    typeof value.chunkId === 'string' &&
    typeof value.score === 'number' &&
    typeof value.uri === 'string' &&
    Range.is(value.range) &&
    (typeof value.mode === 'string' || value.mode === undefined) &&
    (typeof value.preview === 'string' || value.preview === undefined || value.preview === null)
  );
}

/** Keeps the well-formed results of a server answer (anything else is dropped, not thrown). */
export function parseSearchResults(raw: unknown): SearchResult[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  return raw.filter(isSearchResult).map((r) => ({ ...r, preview: typeof r.preview === 'string' ? r.preview : '' }));
}

/**
 * Reads a `chunkls.search` answer: a SearchAnswer (its results and reason), or the
 * bare list an older server sends. Anything malformed is dropped, not thrown.
 */
export function parseSearchAnswer(raw: unknown): ParsedAnswer {
  if (Array.isArray(raw) || !isObject(raw)) {
    return { results: parseSearchResults(raw), reason: undefined };
  }
  const reason = typeof raw.reason === 'string' ? raw.reason : undefined;
  return { results: parseSearchResults(raw.results), reason };
}

/** Collapses a multi-line preview to one line of at most `max` characters. */
export function oneLine(text: string, max = 120): string {
  const collapsed = text.replace(/\s+/g, ' ').trim();
  if (collapsed.length <= max) {
    return collapsed;
  }
  return `${collapsed.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}

/** The score as the mode that gave it: `hybrid 3.14` (`score 3.14` without a mode). */
export function formatScore(score: number, mode?: string): string {
  if (!Number.isFinite(score)) {
    return '';
  }
  return `${mode ?? 'score'} ${score.toFixed(2)}`;
}

/** `$(name)` in a QuickPick label renders as an icon; chunk IDs must show literally. */
function escapeIcons(text: string): string {
  return text.replace(/\$\(/g, '$\u200b(');
}

export function toPickItems(results: readonly SearchResult[]): ChunkPickItem[] {
  return results.map((result) => ({
    label: escapeIcons(result.chunkId),
    description: formatScore(result.score, result.mode),
    detail: escapeIcons(oneLine(result.preview)),
    alwaysShow: true,
    result,
  }));
}

/** The `chunkls.search` argument (asking for the reason too, and no parts). */
export function searchArguments(query: string, topK: number): [SearchArguments] {
  return [{ query, topK, withReason: true, parts: false }];
}

/**
 * The `chunkls.jumpTarget` argument for a result the palette opens; undefined when the
 * result already carries its part (`lines`), or came from an older server (no `lines`).
 */
export function jumpTargetArguments(query: string, result: SearchResult): [JumpTargetArguments] | undefined {
  if (result.lines !== null) {
    return undefined;
  }
  const asked: JumpTargetArguments = { query, chunkId: result.chunkId, uri: result.uri, line: result.range.start.line };
  return [result.mode === undefined ? asked : { ...asked, mode: result.mode }];
}

/** The range a `chunkls.jumpTarget` answer opens; undefined for null or anything malformed. */
export function parseJumpTarget(raw: unknown): Range | undefined {
  return isObject(raw) && Range.is(raw.range) ? raw.range : undefined;
}

export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export interface SearchCallbacks<T> {
  /** Runs one query; `signal` aborts when a newer query supersedes it. */
  run(query: string, signal: AbortSignal): Promise<T>;
  /** Called only with the answer to the latest query. */
  onResult(query: string, result: T): void;
  onError(query: string, error: unknown): void;
  /** Busy while a query is pending or running. */
  onBusy(busy: boolean): void;
  /** The query became empty: clear the list without asking the server. */
  onEmpty(): void;
  /** The query has no searchable terms (only punctuation): the server is not asked. */
  onNoTerms?(query: string): void;
}

/**
 * Debounced search-as-you-type where only the latest query's answer is used:
 * an answer that arrives after a newer query was typed is dropped.
 */
export class LatestSearch<T> {
  private seq = 0;
  private timer: unknown;
  private controller: AbortController | undefined;
  private disposed = false;

  constructor(
    private readonly callbacks: SearchCallbacks<T>,
    private readonly delayMs: number,
    private readonly timers: Timers = realTimers,
  ) {}

  update(rawQuery: string): void {
    if (this.disposed) {
      return;
    }
    const query = rawQuery.trim();
    const seq = ++this.seq;
    this.cancelPending();
    if (query.length === 0) {
      this.callbacks.onBusy(false);
      this.callbacks.onEmpty();
      return;
    }
    if (!hasSearchableTerms(query) && this.callbacks.onNoTerms !== undefined) {
      this.callbacks.onBusy(false);
      this.callbacks.onNoTerms(query);
      return;
    }
    this.callbacks.onBusy(true);
    this.timer = this.timers.setTimeout(() => {
      this.timer = undefined;
      void this.execute(query, seq);
    }, this.delayMs);
  }

  private async execute(query: string, seq: number): Promise<void> {
    const controller = new AbortController();
    this.controller = controller;
    try {
      const result = await this.callbacks.run(query, controller.signal);
      if (this.isCurrent(seq)) {
        this.callbacks.onResult(query, result);
      }
    } catch (error) {
      if (this.isCurrent(seq)) {
        this.callbacks.onError(query, error);
      }
    } finally {
      if (this.isCurrent(seq)) {
        this.controller = undefined;
        this.callbacks.onBusy(false);
      }
    }
  }

  private isCurrent(seq: number): boolean {
    return !this.disposed && seq === this.seq;
  }

  private cancelPending(): void {
    if (this.timer !== undefined) {
      this.timers.clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.controller?.abort();
    this.controller = undefined;
  }

  dispose(): void {
    this.disposed = true;
    this.cancelPending();
  }
}
