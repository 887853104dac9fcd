// What the deterministic model "says" (issue #29): text drawn from a seeded pseudo-random generator
// keyed by the model id and the request, so the same request always gets the same answer and two
// models answer differently; and embedding vectors built from the tokens of a text, so texts that share
// words lie close together (a search demo finds something sensible). No network, no clock, no state.
import { createHash } from 'node:crypto';
import { tokenize } from './tokens.mjs';

/** The words the model speaks; letters only, so each is exactly one token by the token rule. */
export const VOCABULARY = Object.freeze([
  'accelerator', 'allocation', 'batch', 'bandwidth', 'budget', 'cache', 'cluster', 'compute',
  'core', 'data', 'energy', 'epoch', 'fabric', 'factory', 'fine', 'gradient',
  'graph', 'grid', 'inference', 'kernel', 'layer', 'ledger', 'matrix', 'memory',
  'model', 'network', 'node', 'optimizer', 'partition', 'pipeline', 'power', 'precision',
  'project', 'queue', 'rack', 'rate', 'replica', 'research', 'scheduler', 'sequence',
  'shard', 'signal', 'site', 'sovereign', 'storage', 'stream', 'tensor', 'tenant',
  'throughput', 'token', 'training', 'vector', 'volume', 'weight', 'window', 'workload',
  'accurate', 'quiet', 'steady', 'swift', 'green', 'open', 'shared', 'local',
]);

/** An answer's natural length lies in this range (tokens); `max_tokens` below it cuts the answer. */
export const NATURAL_LENGTH_MIN_TOKENS = 16;
export const NATURAL_LENGTH_MAX_TOKENS = 48;

/** How many numbers an embedding has unless the request asks for `dimensions`. */
export const DEFAULT_EMBEDDING_DIMENSIONS = 64;

/**
 * seededRandom returns a generator of numbers in [0, 1) (xoshiro128**) seeded by the SHA-256 of the
 * key's parts: the same parts, the same sequence, on every machine.
 * @param {readonly unknown[]} parts
 * @returns {() => number}
 */
export function seededRandom(parts) {
  const digest = createHash('sha256').update(JSON.stringify(parts)).digest();
  let a = digest.readUInt32LE(0);
  let b = digest.readUInt32LE(4);
  let c = digest.readUInt32LE(8);
  let d = digest.readUInt32LE(12);
  return () => {
    const t = b << 9;
    let r = Math.imul(b, 5);
    r = Math.imul((r << 7) | (r >>> 25), 9);
    c ^= a;
    d ^= b;
    b ^= c;
    a ^= d;
    c ^= t;
    d = (d << 11) | (d >>> 21);
    return (r >>> 0) / 4294967296;
  };
}

/**
 * answerTokens yields the model's answer one token at a time, each a word with its leading space (none
 * before the first word of a chat answer) or a punctuation mark. It ends with "." at the answer's natural
 * length, unless `ignoreEos` asks it to go on for ever (the caller stops it at `max_tokens`).
 * @param {readonly unknown[]} key what the answer depends on: the model, the endpoint, the prompt, the seed
 * @param {{ leadingSpace: boolean, ignoreEos: boolean }} options
 * @returns {Generator<string, void, unknown>}
 */
export function* answerTokens(key, { leadingSpace, ignoreEos }) {
  const random = seededRandom(key);
  const span = NATURAL_LENGTH_MAX_TOKENS - NATURAL_LENGTH_MIN_TOKENS + 1;
  let remaining = NATURAL_LENGTH_MIN_TOKENS + Math.floor(random() * span);
  let sentenceStart = true;
  let wordsInClause = 0;
  let first = true;
  for (;;) {
    remaining -= 1;
    if (remaining === 0) {
      yield '.';
      if (!ignoreEos) return;
      remaining = NATURAL_LENGTH_MIN_TOKENS + Math.floor(random() * span);
      sentenceStart = true;
      wordsInClause = 0;
      continue;
    }
    // A punctuation mark now and then after two words or more, so the text reads as sentences.
    if (wordsInClause >= 2 && remaining > 1 && random() < 0.12) {
      const mark = random() < 0.66 ? ',' : '.';
      sentenceStart = mark === '.';
      wordsInClause = 0;
      yield mark;
      continue;
    }
    const word = VOCABULARY[Math.floor(random() * VOCABULARY.length)] ?? 'token';
    const text = sentenceStart ? word[0].toUpperCase() + word.slice(1) : word;
    yield (first && !leadingSpace ? '' : ' ') + text;
    first = false;
    sentenceStart = false;
    wordsInClause += 1;
  }
}

/**
 * embeddingVector is a text's embedding: the sum of a pseudo-random vector per token (its lower-case
 * form, keyed by the model), scaled to unit length and rounded to 32-bit floats as it is sent. The first
 * numbers do not depend on `dimensions`, so a shorter vector is a longer one cut and scaled again, as
 * OpenAI's shortened embeddings are.
 * @param {string} model
 * @param {string} text
 * @param {number} dimensions
 * @returns {number[]}
 */
export function embeddingVector(model, text, dimensions) {
  const sum = new Float64Array(dimensions);
  const tokens = tokenize(text);
  for (const token of tokens.length > 0 ? tokens : [text]) {
    const random = seededRandom([model, 'embedding', token.toLowerCase()]);
    for (let i = 0; i < dimensions; i += 1) sum[i] += random() * 2 - 1;
  }
  let norm = 0;
  for (const value of sum) norm += value * value;
  norm = Math.sqrt(norm) || 1;
  return Array.from(sum, (value) => Math.fround(value / norm));
}

/**
 * base64Floats encodes numbers as OpenAI's `encoding_format: "base64"` does: 32-bit floats, little-endian.
 * @param {readonly number[]} values
 * @returns {string}
 */
export function base64Floats(values) {
  const buffer = Buffer.alloc(values.length * 4);
  values.forEach((value, i) => buffer.writeFloatLE(value, i * 4));
  return buffer.toString('base64');
}
