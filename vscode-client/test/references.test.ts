import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseReferencesArguments } from '../src/references';

const location = { uri: 'file:///w/docs/chat.md', range: { start: { line: 2, character: 4 }, end: { line: 2, character: 31 } } };

describe('cited-by lens arguments', () => {
  it('accepts (uri, position, locations)', () => {
    const parsed = parseReferencesArguments(['file:///w/app/x.py', { line: 16, character: 0 }, [location]]);
    assert.deepEqual(parsed, { uri: 'file:///w/app/x.py', position: { line: 16, character: 0 }, locations: [location] });
  });

  it('rejects anything else', () => {
    assert.equal(parseReferencesArguments([]), undefined);
    assert.equal(parseReferencesArguments(['file:///x', { line: 'a', character: 0 }, []]), undefined);
    assert.equal(parseReferencesArguments(['file:///x', { line: 1, character: 0 }, [{ uri: 3 }]]), undefined);
    assert.equal(parseReferencesArguments([1, { line: 1, character: 0 }, []]), undefined);
    assert.equal(parseReferencesArguments(['file:///x', { line: -1, character: 0 }, []]), undefined);
    // the protocol's Location guard alone would let a location without a URI through
    assert.equal(parseReferencesArguments(['file:///x', { line: 1, character: 0 }, [{ range: location.range }]]), undefined);
  });
});
