/**
 * Terminal links logic that does not need VS Code: a terminal line's text as
 * the server reads it (ANSI escapes stripped, capped), the server's
 * `chunkls.resolve` answer, and its spans mapped back onto the line.
 *
 * The chunk-ID grammar lives in the server only: the client sends a line that
 * may hold an ID (a cheap superset test: it contains `#`) and the server
 * answers the spans that resolve.
 */

import { Range } from 'vscode-languageserver-protocol';

/** UTF-16 code units of a terminal line sent to the server (the rest of a longer line is not read). */
export const TERMINAL_LINE_MAX = 4000;
/** Links made on one terminal line at most (the server answers at most as many). */
export const TERMINAL_LINKS_MAX = 20;
/** Terminal lines whose answers are remembered (until the index changes). */
export const TERMINAL_CACHE_LINES = 200;

/** Where one chunk is: an element of `targets` in the server's answer. */
export interface ChunkTarget {
  chunkId: string;
  uri: string;
  range: Range;
  sourcePath: string;
  startLine: number;
  endLine: number;
  symbol?: string | null;
}

/** A chunk ID written in the text sent, that resolves: `[start, end)` in UTF-16 code units. */
export interface ResolvedSpan {
  start: number;
  end: number;
  chunkId: string;
  targets: ChunkTarget[];
}

/** A link on the terminal line as VS Code takes it. */
export interface LineLink {
  startIndex: number;
  length: number;
  tooltip: string;
  target: ChunkTarget;
}

/** The cheap test of a line before asking the server: every chunk ID has a `#`. */
export function mayHoldChunkId(line: string): boolean {
  return line.includes('#');
}

// CSI (colours, cursor moves), OSC (titles, hyperlinks; ended by BEL or ST), and the other escapes (`ESC =`, `ESC (B`).
// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[ -/]*[0-~]|\u009b[0-?]*[ -/]*[@-~]/g;

/**
 * A line without its ANSI escapes, and for each of its offsets (and its end)
 * the offset in the original line. VS Code usually hands over rendered text
 * already; escapes left in it must not hide or shift an ID.
 */
export function stripAnsi(line: string): { text: string; offsets: number[] } {
  const offsets: number[] = [];
  let text = '';
  let at = 0;
  const keep = (end: number): void => {
    for (let i = at; i < end; i++) {
      offsets.push(i);
    }
    text += line.slice(at, end);
  };
  for (const match of line.matchAll(ANSI)) {
    keep(match.index);
    at = match.index + match[0].length;
  }
  keep(line.length);
  offsets.push(line.length);
  return { text, offsets };
}

/** The text sent for a line: escapes stripped, at most `TERMINAL_LINE_MAX` code units. */
export function lineForServer(line: string): { text: string; offsets: number[] } {
  const stripped = stripAnsi(line);
  if (stripped.text.length <= TERMINAL_LINE_MAX) {
    return stripped;
  }
  return { text: stripped.text.slice(0, TERMINAL_LINE_MAX), offsets: stripped.offsets.slice(0, TERMINAL_LINE_MAX + 1) };
}

/** The `chunkls.resolve` argument for a line of text, with the terminal's working directory. */
export function resolveTextArguments(text: string, folder: string | undefined): [{ text: string; folder?: string }] {
  return [folder === undefined ? { text } : { text, folder }];
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

function isTarget(value: unknown): value is ChunkTarget {
  return (
    isObject(value) &&
    typeof value.chunkId === 'string' &&
    typeof value.uri === 'string' &&
    Range.is(value.range) &&
    typeof value.sourcePath === 'string' &&
    typeof value.startLine === 'number' &&
    typeof value.endLine === 'number'
  );
}

/** The well-formed spans of a server answer to `{text}` (anything else is dropped, not thrown). */
export function parseResolvedSpans(raw: unknown): ResolvedSpan[] {
  if (!Array.isArray(raw)) {
    return [];
  }
  const spans: ResolvedSpan[] = [];
  for (const item of raw) {
    if (
      isObject(item) &&
      typeof item.start === 'number' &&
      typeof item.end === 'number' &&
      Number.isInteger(item.start) &&
      Number.isInteger(item.end) &&
      item.start >= 0 &&
      item.end > item.start &&
      typeof item.chunkId === 'string' &&
      Array.isArray(item.targets)
    ) {
      const targets = item.targets.filter(isTarget);
      if (targets.length > 0) {
        spans.push({ start: item.start, end: item.end, chunkId: item.chunkId, targets });
      }
    }
  }
  return spans;
}

/** The tooltip of a link: the chunk's ID, file and lines (VS Code adds how to follow it). */
export function linkTooltip(target: ChunkTarget, more = 0): string {
  const symbol = typeof target.symbol === 'string' && target.symbol.length > 0 ? ` (${target.symbol})` : '';
  const others = more > 0 ? `, and ${more} more with this ID` : '';
  return `Open chunk ${target.chunkId}: ${target.sourcePath}, lines ${target.startLine}-${target.endLine}${symbol}${others}`;
}

/** The links of a line: spans of the text sent, mapped back onto the original line, at most `TERMINAL_LINKS_MAX`. */
export function lineLinks(spans: readonly ResolvedSpan[], offsets: readonly number[]): LineLink[] {
  const links: LineLink[] = [];
  for (const span of spans) {
    const start = offsets[span.start];
    // the original offset just after the span's last character (escapes after it are not covered)
    const last = offsets[span.end - 1];
    const target = span.targets[0];
    if (start === undefined || last === undefined || target === undefined) {
      continue;
    }
    links.push({ startIndex: start, length: last + 1 - start, tooltip: linkTooltip(target, span.targets.length - 1), target });
    if (links.length === TERMINAL_LINKS_MAX) {
      break;
    }
  }
  return links;
}

/** A bounded map of the most recently used entries (a line's answer, by its text and folder). */
export class RecentAnswers<T> {
  private readonly entries = new Map<string, T>();

  constructor(private readonly limit: number = TERMINAL_CACHE_LINES) {}

  get(key: string): T | undefined {
    const value = this.entries.get(key);
    if (value !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, value);
    }
    return value;
  }

  set(key: string, value: T): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    while (this.entries.size > this.limit) {
      const oldest = this.entries.keys().next();
      if (oldest.done === true) {
        break;
      }
      this.entries.delete(oldest.value);
    }
  }

  clear(): void {
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}
