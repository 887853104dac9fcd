// What the deterministic model says: an answer of N tokens counts as N by the token rule (so `usage` can
// be checked from the text alone), the same request gets the same answer, and embeddings of texts that
// share words lie close together.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { answerTokens, embeddingVector, NATURAL_LENGTH_MAX_TOKENS, NATURAL_LENGTH_MIN_TOKENS } from './generate.mjs';
import { countTokens } from './tokens.mjs';

function take(tokens: Generator<string, void, unknown>, limit: number): string[] {
  const taken: string[] = [];
  for (const token of tokens) {
    taken.push(token);
    if (taken.length === limit) break;
  }
  return taken;
}

describe('the generated answer', () => {
  it('counts as many tokens as it yielded, for any request', () => {
    fc.assert(
      fc.property(fc.string(), fc.boolean(), fc.integer({ min: 1, max: 200 }), (prompt, leadingSpace, limit) => {
        const tokens = take(answerTokens(['model', 'chat', prompt, null], { leadingSpace, ignoreEos: true }), limit);
        expect(tokens).toHaveLength(limit);
        expect(countTokens(tokens.join(''))).toBe(limit);
        expect(tokens[0]!.startsWith(' ')).toBe(leadingSpace);
      }),
      { numRuns: 200 },
    );
  });

  it('ends by itself between its natural bounds with a full stop, the same each time', () => {
    for (const prompt of ['a', 'b', 'c', 'a longer prompt']) {
      const answer = [...answerTokens(['model', 'chat', prompt, null], { leadingSpace: false, ignoreEos: false })];
      expect(answer.length).toBeGreaterThanOrEqual(NATURAL_LENGTH_MIN_TOKENS);
      expect(answer.length).toBeLessThanOrEqual(NATURAL_LENGTH_MAX_TOKENS);
      expect(answer.at(-1)).toBe('.');
      expect([...answerTokens(['model', 'chat', prompt, null], { leadingSpace: false, ignoreEos: false })]).toEqual(answer);
      expect([...answerTokens(['other model', 'chat', prompt, null], { leadingSpace: false, ignoreEos: false })]).not.toEqual(answer);
    }
  });

  it('embeds texts that share words closer than texts that do not', () => {
    const dot = (a: number[], b: number[]) => a.reduce((sum, value, i) => sum + value * b[i]!, 0);
    const gpu = embeddingVector('model', 'GPU hours in Germany', 64);
    const near = embeddingVector('model', 'gpu hours in France', 64);
    const far = embeddingVector('model', 'a recipe for bread', 64);
    expect(dot(gpu, near)).toBeGreaterThan(dot(gpu, far));
    // A shorter vector is the start of the longer one, scaled again.
    const short = embeddingVector('model', 'GPU hours in Germany', 8);
    const scale = short[0]! / gpu[0]!;
    short.forEach((value, i) => expect(value).toBeCloseTo(gpu[i]! * scale, 5));
  });
});
