import { describe, expect, it } from 'vitest';
import { SseTap, WholeTap } from './usage-tap';

const enc = new TextEncoder();
const chunk = (content: string) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }], usage: null })}\n\n`;
const usage = `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } })}\n\n`;
const stream = [`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }], usage: null })}\n\n`, chunk('Hello'), chunk(' GPU'), chunk('.'), usage, 'data: [DONE]\n\n'].join('');

describe('SseTap', () => {
  it('reads the pieces, the first one’s time and the usage of a stream cut anywhere, passing every event on', () => {
    for (const cut of [1, 7, 50, 113, stream.length - 3]) {
      const tap = new SseTap(false);
      const bytes = enc.encode(stream);
      const out = [...tap.feed(bytes.subarray(0, cut), 10), ...tap.feed(bytes.subarray(cut), 20), ...tap.end(30)];
      expect(out.map((e) => e.text).join(''), `cut at ${cut}`).toBe(stream);
      expect(out.some((e) => e.drop)).toBe(false);
      expect(tap.result).toMatchObject({ promptTokens: 12, completionTokens: 3, streamedPieces: 3 });
      expect([10, 20]).toContain(tap.result.firstTokenAt);
    }
  });

  it('drops the usage chunk the client did not ask for, and keeps everything else', () => {
    const tap = new SseTap(true);
    const out = [...tap.feed(enc.encode(stream), 5), ...tap.end(6)];
    expect(out.filter((e) => e.drop).map((e) => e.text)).toEqual([usage]);
    expect(out.filter((e) => !e.drop).map((e) => e.text).join('')).toBe(stream.replace(usage, ''));
    expect(tap.result.completionTokens).toBe(3);
  });

  it('counts what was streamed of an answer cut before its usage, and takes text completions and CRLF events', () => {
    const tap = new SseTap(false);
    tap.feed(enc.encode(`data: {"choices":[{"text":"one"}]}\r\n\r\ndata: {"choices":[{"text":" two"}]}\r\n\r\ndata: {"choi`), 1);
    tap.end(2);
    expect(tap.result).toEqual({ promptTokens: null, completionTokens: null, streamedPieces: 2, firstTokenAt: 1 });
  });

  it('ignores what is not an answer: comments, bad JSON, negative or fractional counts', () => {
    const tap = new SseTap(false);
    tap.feed(enc.encode(': keep-alive\n\ndata: {not json\n\ndata: {"choices":[],"usage":{"prompt_tokens":-1,"completion_tokens":2}}\n\ndata: {"usage":{"prompt_tokens":1.5}}\n\n'), 1);
    tap.end(2);
    expect(tap.result).toEqual({ promptTokens: null, completionTokens: null, streamedPieces: 0, firstTokenAt: null });
  });
});

describe('WholeTap', () => {
  it('reads a whole answer’s usage, an embedding’s without completion tokens, and nothing of an error page', () => {
    const chat = new WholeTap();
    const body = enc.encode(JSON.stringify({ choices: [{ message: { content: 'Hi' } }], usage: { prompt_tokens: 9, completion_tokens: 2 } }));
    chat.feed(body.subarray(0, 10), 3);
    chat.feed(body.subarray(10), 4);
    chat.end();
    expect(chat.result).toMatchObject({ promptTokens: 9, completionTokens: 2, firstTokenAt: 3 });
    const embedding = new WholeTap();
    embedding.feed(enc.encode('{"data":[],"usage":{"prompt_tokens":4,"total_tokens":4}}'), 1);
    embedding.end();
    expect(embedding.result).toMatchObject({ promptTokens: 4, completionTokens: 0 });
    const page = new WholeTap();
    page.feed(enc.encode('<html>502</html>'), 1);
    page.end();
    expect(page.result.promptTokens).toBeNull();
  });
});
