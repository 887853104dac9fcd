import { describe, expect, it } from 'vitest';
import { SseTap, WholeTap } from './usage-tap';

const enc = new TextEncoder();
const text = (pieces: Uint8Array[]) => Buffer.concat(pieces).toString('utf8');
const chunk = (content: string) => `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content } }], usage: null })}\n\n`;
const usage = `data: ${JSON.stringify({ object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 } })}\n\n`;
const stream = [`data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: 'assistant', content: '' } }], usage: null })}\n\n`, chunk('Hello'), chunk(' GPU'), chunk('.'), usage, 'data: [DONE]\n\n'].join('');

describe('SseTap', () => {
  it('reads the pieces, the first one’s time and the usage of a stream cut anywhere, passing every event on', () => {
    for (const cut of [1, 7, 50, 113, stream.length - 3]) {
      const tap = new SseTap(false);
      const bytes = enc.encode(stream);
      const out = [...tap.feed(bytes.subarray(0, cut), 10), ...tap.feed(bytes.subarray(cut), 20), ...tap.end(30)];
      expect(text(out), `cut at ${cut}`).toBe(stream);
      expect(tap.result).toMatchObject({ promptTokens: 12, completionTokens: 3, streamedPieces: 3 });
      expect([10, 20]).toContain(tap.result.firstTokenAt);
    }
  });

  it('drops the usage chunk the client did not ask for, and keeps everything else', () => {
    const tap = new SseTap(true);
    const out = [...tap.feed(enc.encode(stream), 5), ...tap.end(6)];
    expect(text(out)).toBe(stream.replace(usage, ''));
    expect(tap.result.completionTokens).toBe(3);
    // Cut inside the usage chunk, and the events around it cut too.
    for (const cut of [stream.indexOf(usage) + 5, stream.indexOf(usage) - 3, stream.indexOf(usage) + usage.length + 2]) {
      const again = new SseTap(true);
      const bytes = enc.encode(stream);
      expect(text([...again.feed(bytes.subarray(0, cut), 1), ...again.feed(bytes.subarray(cut), 2), ...again.end(3)]), `cut at ${cut}`).toBe(stream.replace(usage, ''));
    }
  });

  it('passes the bytes as they came, without copying them, when nothing is left out', () => {
    const tap = new SseTap(false);
    const bytes = enc.encode(chunk('a') + chunk('b'));
    const out = tap.feed(bytes, 1);
    expect(out).toHaveLength(1);
    expect(out[0]!.buffer).toBe(bytes.buffer);
    expect(out[0]!.byteLength).toBe(bytes.byteLength);
  });

  it('reads events of several lines and CRLF events, and an event without its blank line at the end', () => {
    const tap = new SseTap(false);
    const events = `event: message\r\ndata: {"choices":[{"text":"one"}]}\r\n\r\ndata: {"choices":\ndata: [{"text":" two"}]}\n\ndata: {"choices":[{"text":"!"}],"usage":{"prompt_tokens":2,"completion_tokens":3}}`;
    const out = [...tap.feed(enc.encode(events), 1), ...tap.end(2)];
    expect(text(out)).toBe(events);
    expect(tap.result).toEqual({ promptTokens: 2, completionTokens: 3, streamedPieces: 3, firstTokenAt: 1 });
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
