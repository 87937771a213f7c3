import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  lineForServer,
  lineLinks,
  linkTooltip,
  mayHoldChunkId,
  parseResolvedSpans,
  RecentAnswers,
  resolveTextArguments,
  stripAnsi,
  TERMINAL_LINE_MAX,
  TERMINAL_LINKS_MAX,
  type ResolvedSpan,
} from '../src/terminalText';

const range = { start: { line: 16, character: 0 }, end: { line: 19, character: 22 } };
const greet = {
  chunkId: 'app/greet.py#function-greet',
  uri: 'file:///w/app/greet.py',
  range,
  sourcePath: 'app/greet.py',
  startLine: 17,
  endLine: 20,
  symbol: 'greet',
};
const ID = greet.chunkId;

/** The span the server would answer for the first `id` in `text`. */
function spanOf(text: string, id = ID): ResolvedSpan {
  const start = text.indexOf(id);
  return { start, end: start + id.length, chunkId: id, targets: [greet] };
}

describe('terminal lines', () => {
  it('asks the server only about lines with a #', () => {
    assert.equal(mayHoldChunkId(`1. ${ID} (bm25 3.1)`), true);
    assert.equal(mayHoldChunkId('$ ls -la'), false);
  });

  it('strips ANSI colours and maps offsets back onto the line', () => {
    const line = `\u001b[1;32m1.\u001b[0m \u001b[36m${ID}\u001b[0m (bm25 30.047)`;
    const { text, offsets } = stripAnsi(line);
    assert.equal(text, `1. ${ID} (bm25 30.047)`);
    const [link] = lineLinks([spanOf(text)], offsets);
    assert.ok(link);
    assert.equal(line.slice(link.startIndex, link.startIndex + link.length), ID);
  });

  it('keeps a colour change inside an ID inside the link', () => {
    const line = `see app/greet.py\u001b[2m#\u001b[22mfunction-greet!`;
    const { text, offsets } = stripAnsi(line);
    assert.equal(text, `see ${ID}!`);
    const [link] = lineLinks([spanOf(text)], offsets);
    assert.ok(link);
    assert.equal(link.startIndex, 4);
    assert.equal(line.slice(link.startIndex, link.startIndex + link.length), `app/greet.py\u001b[2m#\u001b[22mfunction-greet`);
  });

  it('strips OSC sequences (titles, hyperlinks) and lone escapes', () => {
    const line = `\u001b]0;title\u0007\u001b]8;;file:///x\u001b\\${ID}\u001b]8;;\u001b\\ \u001b=\u001b(Bdone`;
    assert.equal(stripAnsi(line).text, `${ID} done`);
  });

  it('leaves a plain line as it is (a wrapped line arrives whole)', () => {
    const line = `${'x'.repeat(300)} ${ID}`;
    const { text, offsets } = stripAnsi(line);
    assert.equal(text, line);
    const [link] = lineLinks([spanOf(text)], offsets);
    assert.equal(link?.startIndex, 301);
  });

  it('caps the text sent and the links made per line', () => {
    const long = `${ID} `.repeat(500);
    const { text, offsets } = lineForServer(long);
    assert.equal(text.length, TERMINAL_LINE_MAX);
    assert.equal(offsets.length, TERMINAL_LINE_MAX + 1);
    const spans: ResolvedSpan[] = [];
    for (let at = 0; at + ID.length <= text.length; at += ID.length + 1) {
      spans.push({ start: at, end: at + ID.length, chunkId: ID, targets: [greet] });
    }
    assert.equal(lineLinks(spans, offsets).length, TERMINAL_LINKS_MAX);
  });

  it('sends the text and the folder of the terminal', () => {
    assert.deepEqual(resolveTextArguments('a', undefined), [{ text: 'a' }]);
    assert.deepEqual(resolveTextArguments('a', 'file:///w'), [{ text: 'a', folder: 'file:///w' }]);
  });
});

describe('the chunkls.resolve answer', () => {
  it('keeps well-formed spans with targets, drops the rest', () => {
    const spans = parseResolvedSpans([
      { start: 3, end: 30, chunkId: ID, targets: [greet] },
      { start: 3, end: 3, chunkId: ID, targets: [greet] },
      { start: -1, end: 3, chunkId: ID, targets: [greet] },
      { start: 1.5, end: 3, chunkId: ID, targets: [greet] },
      { start: 0, end: 3, chunkId: ID, targets: [{ chunkId: ID }] },
      { start: 0, end: 3, chunkId: ID },
      null,
      'x',
    ]);
    assert.deepEqual(spans, [{ start: 3, end: 30, chunkId: ID, targets: [greet] }]);
    assert.deepEqual(parseResolvedSpans({ error: 1 }), []);
  });

  it('names the chunk in the tooltip: ID, path, lines', () => {
    assert.equal(linkTooltip(greet), `Open chunk ${ID}: app/greet.py, lines 17-20 (greet)`);
    assert.equal(linkTooltip({ ...greet, symbol: null }, 1), `Open chunk ${ID}: app/greet.py, lines 17-20, and 1 more with this ID`);
  });
});

describe('recent answers', () => {
  it('keeps the most recently used, up to its limit', () => {
    const answers = new RecentAnswers<number>(2);
    answers.set('a', 1);
    answers.set('b', 2);
    assert.equal(answers.get('a'), 1);
    answers.set('c', 3);
    assert.equal(answers.get('b'), undefined);
    assert.equal(answers.get('a'), 1);
    assert.equal(answers.size, 2);
    answers.clear();
    assert.equal(answers.size, 0);
  });
});
