import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  acceptedResult,
  hasSearchableTerms,
  jumpTargetArguments,
  LatestSearch,
  NO_MATCH_LABEL,
  NO_TERMS_LABEL,
  oneLine,
  parseJumpTarget,
  parseSearchAnswer,
  parseSearchResults,
  resultItems,
  searchArguments,
  toPickItems,
  type Timers,
} from '../src/search';

const range = { start: { line: 3, character: 0 }, end: { line: 9, character: 12 } };

describe('search results to QuickPick items', () => {
  it('shows the chunk ID, the score and a one-line preview, always shown', () => {
    const items = toPickItems([
      { chunkId: 'app/greet.py#function-greet', score: 3.14159, uri: 'file:///w/app/greet.py', range, preview: 'def greet(name):\n    """Say hello."""\n' },
    ]);
    assert.equal(items.length, 1);
    const [item] = items;
    assert.ok(item);
    assert.equal(item.label, 'app/greet.py#function-greet');
    assert.equal(item.description, 'score 3.14');
    assert.equal(item.detail, 'def greet(name): """Say hello."""');
    assert.equal(item.alwaysShow, true);
    assert.equal(item.result.uri, 'file:///w/app/greet.py');
  });

  it('names the mode that ranked a result beside its score', () => {
    const [item] = toPickItems(
      parseSearchResults([{ chunkId: 'a.py#function-f', score: 2.5, mode: 'hybrid', uri: 'file:///a.py', range, preview: '' }]),
    );
    assert.ok(item);
    assert.equal(item.description, 'hybrid 2.50');
    assert.deepEqual(parseSearchResults([{ chunkId: 'a.py#module-1', score: 1, mode: 3, uri: 'file:///a.py', range }]), []);
  });

  it('keeps the server order and escapes $( so IDs are not read as icons', () => {
    const items = toPickItems([
      { chunkId: 'b.md#heading-$(x)', score: 2, uri: 'file:///b', range, preview: '' },
      { chunkId: 'a.md#heading-a', score: 1, uri: 'file:///a', range, preview: '' },
    ]);
    assert.deepEqual(items.map((i) => i.result.chunkId), ['b.md#heading-$(x)', 'a.md#heading-a']);
    assert.ok(!items[0]?.label.includes('$('));
  });

  it('drops malformed results instead of throwing', () => {
    const parsed = parseSearchResults([
      { chunkId: 'ok.py#module', score: 1, uri: 'file:///ok.py', range, preview: 'x' },
      { chunkId: 'no-range', score: 1, uri: 'file:///x' },
      null,
      'text',
      { chunkId: 'nopreview.py#module', score: 0.5, uri: 'file:///n.py', range },
    ]);
    assert.deepEqual(parsed.map((r) => r.chunkId), ['ok.py#module', 'nopreview.py#module']);
    assert.equal(parsed[1]?.preview, '');
    assert.deepEqual(parseSearchResults(null), []);
  });

  it('checks ranges with the protocol guard (no negative lines or characters)', () => {
    const bad = [
      { start: { line: -1, character: 0 }, end: { line: 1, character: 0 } },
      { start: { line: 1, character: '0' }, end: { line: 2, character: 0 } },
      { start: { line: 1, character: 0 } },
    ];
    const parsed = parseSearchResults(bad.map((r) => ({ chunkId: 'x.py#module', score: 1, uri: 'file:///x.py', range: r })));
    assert.deepEqual(parsed, []);
  });

  it('truncates long previews', () => {
    const text = 'word '.repeat(100);
    const line = oneLine(text, 40);
    assert.equal(line.length, 40);
    assert.ok(line.endsWith('…'));
  });

  it('shows one "No chunks match" item for an answer with no chunk, and accepting it does nothing', () => {
    const items = resultItems([]);
    assert.equal(items.length, 1);
    const [item] = items;
    assert.ok(item);
    assert.equal(item.label, `$(circle-slash) ${NO_MATCH_LABEL}`);
    assert.equal(NO_MATCH_LABEL, 'No chunks match');
    assert.equal(item.alwaysShow, true);
    assert.equal(item.result, undefined);
    assert.equal(acceptedResult(item), undefined);
    assert.equal(acceptedResult(undefined), undefined);
  });

  it('shows the results themselves when there are some, and accepting one opens its chunk', () => {
    const result = { chunkId: 'a.md#heading-a', score: 1, uri: 'file:///a', range, preview: '' };
    const items = resultItems([result]);
    assert.deepEqual(items.map((i) => i.label), ['a.md#heading-a']);
    assert.equal(acceptedResult(items[0]), result);
  });

  it('tells queries with searchable terms from punctuation', () => {
    for (const query of ['greet', 'x', '_', 'é', '42', '#heading-setup', '日本']) {
      assert.equal(hasSearchableTerms(query), true, query);
    }
    for (const query of ['', '   ', '?!', '#-.', '()[]{}', '…']) {
      assert.equal(hasSearchableTerms(query), false, query);
    }
  });

  it('sends one argument object with query and topK, asking for no parts', () => {
    assert.deepEqual(searchArguments('greet', 50), [{ query: 'greet', topK: 50, withReason: true, parts: false }]);
  });

  it('asks the jump target only of a result listed without its part', () => {
    const base = { chunkId: 'a.py#class-A', score: 1, uri: 'file:///a.py', range, preview: '' };
    const listed = { ...base, mode: 'bm25', lines: null };
    assert.deepEqual(jumpTargetArguments('a method', listed), [
      { query: 'a method', chunkId: 'a.py#class-A', uri: 'file:///a.py', line: 3, mode: 'bm25' },
    ]);
    assert.deepEqual(jumpTargetArguments('q', { ...base, lines: null }), [{ query: 'q', chunkId: 'a.py#class-A', uri: 'file:///a.py', line: 3 }]);
    // a result with its part, or from an older server (no lines at all): opened as it is
    assert.equal(jumpTargetArguments('q', { ...listed, lines: [4, 6] }), undefined);
    assert.equal(jumpTargetArguments('q', base), undefined);
  });

  it("reads a jump target's range, and nothing from null or a malformed answer", () => {
    const part = { start: { line: 5, character: 0 }, end: { line: 7, character: 9 } };
    assert.deepEqual(parseJumpTarget({ range: part, lines: [6, 8], part: 'f' }), part);
    for (const raw of [null, undefined, 'x', {}, { range: { start: 1 } }, [part]]) {
      assert.equal(parseJumpTarget(raw), undefined, JSON.stringify(raw));
    }
  });

  it("shows the server's reason for a query it did not search (only stop words), not 'No chunks match'", () => {
    const reason = "the query has no searchable terms (only question and stop words, such as 'how', 'does', 'the'): 'how does a'";
    const answer = parseSearchAnswer({ results: [], mode: 'hybrid', reason });
    assert.deepEqual(answer, { results: [], reason });
    const items = resultItems(answer.results, answer.reason);
    assert.equal(items.length, 1);
    const [item] = items;
    assert.ok(item);
    assert.equal(item.label, `$(circle-slash) ${NO_TERMS_LABEL}`);
    assert.equal(item.description, reason);
    assert.equal(acceptedResult(item), undefined);
  });

  it('reads an answer with results and no reason, and the bare list of an older server', () => {
    const result = { chunkId: 'a.md#heading-a', score: 1, mode: 'bm25', uri: 'file:///a', range, preview: 'x' };
    assert.deepEqual(parseSearchAnswer({ results: [result], mode: 'bm25', reason: null }), { results: [result], reason: undefined });
    assert.deepEqual(parseSearchAnswer([result]), { results: [result], reason: undefined });
    const searched = parseSearchAnswer({ results: [], mode: 'hybrid', reason: null });
    assert.deepEqual(resultItems(searched.results, searched.reason).map((i) => i.label), [`$(circle-slash) ${NO_MATCH_LABEL}`]);
    for (const bad of [null, 3, 'x', { results: 'x', reason: 4 }, { reason: 'why' }]) {
      assert.deepEqual(parseSearchAnswer(bad).results, [], JSON.stringify(bad));
    }
    assert.equal(parseSearchAnswer({ reason: 'why' }).reason, 'why');
  });
});

class FakeTimers implements Timers {
  private next = 1;
  readonly pending = new Map<number, () => void>();
  setTimeout(fn: () => void): unknown {
    const id = this.next++;
    this.pending.set(id, fn);
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  flush(): void {
    const fns = [...this.pending.values()];
    this.pending.clear();
    for (const fn of fns) fn();
  }
}

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('LatestSearch', () => {
  function setup() {
    const timers = new FakeTimers();
    const runs: { query: string; signal: AbortSignal; answer: ReturnType<typeof deferred<string>> }[] = [];
    const results: string[] = [];
    const busy: boolean[] = [];
    let empties = 0;
    const noTerms: string[] = [];
    const search = new LatestSearch<string>(
      {
        run: (query, signal) => {
          const answer = deferred<string>();
          runs.push({ query, signal, answer });
          return answer.promise;
        },
        onResult: (query, result) => results.push(`${query}=${result}`),
        onError: (query) => results.push(`${query}!`),
        onBusy: (b) => busy.push(b),
        onEmpty: () => empties++,
        onNoTerms: (query) => noTerms.push(query),
      },
      150,
      timers,
    );
    return { timers, runs, results, busy, search, empties: () => empties, noTerms };
  }

  it('debounces typing into one request', async () => {
    const { timers, runs, search } = setup();
    search.update('g');
    search.update('gr');
    search.update('gre');
    assert.equal(runs.length, 0);
    assert.equal(timers.pending.size, 1);
    timers.flush();
    await tick();
    assert.deepEqual(runs.map((r) => r.query), ['gre']);
  });

  it('drops a stale answer that arrives after a newer query', async () => {
    const { timers, runs, results, search } = setup();
    search.update('old');
    timers.flush();
    search.update('new');
    timers.flush();
    await tick();
    assert.equal(runs.length, 2);
    assert.equal(runs[0]!.signal.aborted, true);
    runs[1]?.answer.resolve('B');
    runs[0]?.answer.resolve('A');
    await tick();
    assert.deepEqual(results, ['new=B']);
  });

  it('clears without asking the server for an empty query', async () => {
    const { timers, runs, search, empties, busy } = setup();
    search.update('x');
    search.update('   ');
    timers.flush();
    await tick();
    assert.equal(runs.length, 0);
    assert.equal(empties(), 1);
    assert.equal(busy.at(-1), false);
  });

  it('does not ask the server for a punctuation-only query, and says it has no searchable terms', async () => {
    const { timers, runs, search, noTerms, busy, results } = setup();
    search.update('greet');
    search.update(' ?! ');
    timers.flush();
    await tick();
    assert.equal(runs.length, 0);
    assert.deepEqual(noTerms, ['?!']);
    assert.deepEqual(results, []);
    assert.equal(busy.at(-1), false);
    assert.equal(NO_TERMS_LABEL, 'The query has no searchable terms');
  });

  it('reports errors of the latest query and nothing after dispose', async () => {
    const { timers, runs, results, search } = setup();
    search.update('a');
    timers.flush();
    await tick();
    runs[0]?.answer.resolve('late');
    search.dispose();
    await tick();
    assert.deepEqual(results, []);
  });
});
