// What the gateway reads of a model's answer as it passes (issue #29): the `usage` the server reports
// (prompt and completion tokens), how many answer pieces were streamed before the client stopped
// listening, and when the first one came (time to first token). Streamed answers are server-sent
// events, `data: <json>\n\n` … `data: [DONE]\n\n`; a whole answer is one JSON document. Nothing of the
// text is kept beyond the event being read. Pure: the gateway feeds it the bytes and the clock.

/** What an answer said about itself. */
export interface TapResult {
  /** From the answer's `usage` (null: it had none, or it ended before it). */
  promptTokens: number | null;
  completionTokens: number | null;
  /** Streamed: answer pieces (a delta's content or a completion's text) passed to the client. */
  streamedPieces: number;
  /** Ms (on the clock fed) when the first answer piece passed; a whole answer: when its first byte did. */
  firstTokenAt: number | null;
}

/** The most of a whole (not streamed) answer kept to read its `usage` (an embedding of 2048 inputs in floats is ~25 MiB). */
export const MAX_WHOLE_ANSWER_BYTES = 64 * 1024 * 1024;

interface Usage {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
}

function usageOf(value: unknown): { prompt: number; completion: number } | null {
  const usage = (value as { usage?: Usage | null } | null)?.usage;
  if (!usage || typeof usage !== 'object') return null;
  const prompt = usage.prompt_tokens;
  const completion = usage.completion_tokens ?? 0; // embeddings report no completion tokens
  return Number.isSafeInteger(prompt) && Number.isSafeInteger(completion) && (prompt as number) >= 0 && (completion as number) >= 0 ? { prompt: prompt as number, completion: completion as number } : null;
}

/** Answer pieces in one streamed chunk: each choice's non-empty delta content (chat) or text (completions). */
function piecesOf(value: unknown): number {
  const choices = (value as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices)) return 0;
  let n = 0;
  for (const choice of choices as { delta?: { content?: unknown }; text?: unknown }[]) {
    const text = choice?.delta?.content ?? choice?.text;
    if (typeof text === 'string' && text.length > 0) n += 1;
  }
  return n;
}

/** The end of the first event boundary (a blank line: `\n\n` or `\n\r\n`, as /\r?\n\r?\n/) at or after `from`; -1: none yet. */
function boundaryEnd(data: Buffer, from: number): number {
  for (let i = data.indexOf(0x0a, from); i >= 0; i = data.indexOf(0x0a, i + 1)) {
    if (data[i + 1] === 0x0a) return i + 2;
    if (data[i + 1] === 0x0d && data[i + 2] === 0x0a) return i + 3;
  }
  return -1;
}

/** The `data:` of one event (its lines joined by \n, as EventSource does), '' when it has none. */
function dataOf(event: Buffer): string {
  // Nearly every event is one `data: <json>` line and its blank line: read without splitting the event.
  const nl = event.indexOf(0x0a);
  const tail = nl < 0 ? 0 : event.length - nl - 1;
  const oneLine = nl < 0 || (tail === 1 && event[nl + 1] === 0x0a) || (tail === 2 && event[nl + 1] === 0x0d && event[nl + 2] === 0x0a);
  if (oneLine && event.length >= 6 && event.toString('latin1', 0, 6) === 'data: ') {
    const lineEnd = nl < 0 ? event.length : nl;
    return event.toString('utf8', 6, event[lineEnd - 1] === 0x0d ? lineEnd - 1 : lineEnd);
  }
  return event
    .toString('utf8')
    .split(/\r?\n/)
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).replace(/^ /, ''))
    .join('\n');
}

/**
 * SseTap reads a streamed answer event by event, on its bytes: what passes to the client is the bytes as
 * they came (views of them, not copies), up to the last whole event — a partial one waits for the rest.
 * `hideUsage`: the gateway asked the server for `include_usage` on the client's behalf (to meter), so the
 * usage-only chunk the client did not ask for is left out of what it gets.
 */
export class SseTap {
  /** The bytes of an event not yet whole. */
  private pending: Buffer | null = null;
  readonly result: TapResult = { promptTokens: null, completionTokens: null, streamedPieces: 0, firstTokenAt: null };

  constructor(private readonly hideUsage: boolean) {}

  /** feed takes the next bytes and returns what passes on, in order: the whole events in them, less a hidden usage chunk. */
  feed(bytes: Uint8Array, now: number): Uint8Array[] {
    const chunk = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = null;
    return this.events(data, now, false);
  }

  /** end returns what is left (an event without its blank line still counts). */
  end(now: number): Uint8Array[] {
    const data = this.pending;
    this.pending = null;
    return data ? this.events(data, now, true) : [];
  }

  private events(data: Buffer, now: number, last: boolean): Uint8Array[] {
    const out: Uint8Array[] = [];
    let start = 0; // where the next event begins
    let passFrom = 0; // the first byte not yet passed on
    const take = (end: number) => {
      if (this.read(data.subarray(start, end), now)) {
        if (start > passFrom) out.push(data.subarray(passFrom, start));
        passFrom = end;
      }
      start = end;
    };
    for (let end = boundaryEnd(data, 0); end >= 0; end = boundaryEnd(data, start)) take(end);
    if (last && start < data.length) take(data.length);
    if (start > passFrom) out.push(data.subarray(passFrom, start));
    // A copy: the rest of an event waits beside bytes the client already has.
    if (start < data.length) this.pending = Buffer.from(data.subarray(start));
    return out;
  }

  /** read takes one event's figures; true when it is the usage chunk to leave out. */
  private read(event: Buffer, now: number): boolean {
    const data = dataOf(event);
    if (data === '' || data === '[DONE]') return false;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return false;
    }
    const pieces = piecesOf(value);
    if (pieces > 0) {
      this.result.streamedPieces += pieces;
      this.result.firstTokenAt ??= now;
    }
    const usage = usageOf(value);
    if (!usage) return false;
    this.result.promptTokens = usage.prompt;
    this.result.completionTokens = usage.completion;
    const choices = (value as { choices?: unknown[] }).choices;
    return this.hideUsage && Array.isArray(choices) && choices.length === 0;
  }
}

/** WholeTap reads a whole answer's `usage` once it has all of it (kept up to MAX_WHOLE_ANSWER_BYTES). */
export class WholeTap {
  private chunks: Uint8Array[] = [];
  private size = 0;
  readonly result: TapResult = { promptTokens: null, completionTokens: null, streamedPieces: 0, firstTokenAt: null };

  feed(bytes: Uint8Array, now: number): void {
    this.result.firstTokenAt ??= now;
    if (this.size + bytes.byteLength > MAX_WHOLE_ANSWER_BYTES) {
      this.chunks = [];
      this.size = Number.POSITIVE_INFINITY;
      return;
    }
    this.chunks.push(bytes);
    this.size += bytes.byteLength;
  }

  end(): void {
    if (!Number.isFinite(this.size)) return;
    try {
      const usage = usageOf(JSON.parse(Buffer.concat(this.chunks).toString('utf8')));
      if (usage) {
        this.result.promptTokens = usage.prompt;
        this.result.completionTokens = usage.completion;
      }
    } catch {
      // Not JSON (an error page): no usage.
    }
    this.chunks = [];
  }
}
