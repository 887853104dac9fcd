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

/** One event of a stream as the tap saw it: `drop` when the client did not ask for the usage chunk the gateway asked for. */
export interface TappedEvent {
  text: string;
  drop: boolean;
}

/**
 * SseTap reads a streamed answer event by event. `hideUsage`: the gateway asked the server for
 * `include_usage` on the client's behalf (to meter), so the usage-only chunk the client did not ask
 * for is dropped from what it gets.
 */
export class SseTap {
  private buffer = '';
  private readonly decoder = new TextDecoder();
  readonly result: TapResult = { promptTokens: null, completionTokens: null, streamedPieces: 0, firstTokenAt: null };

  constructor(private readonly hideUsage: boolean) {}

  /** feed takes the next bytes and returns the whole events in them, in order (a partial one waits for the rest). */
  feed(bytes: Uint8Array, now: number): TappedEvent[] {
    this.buffer += this.decoder.decode(bytes, { stream: true });
    return this.events(now, false);
  }

  /** end returns what is left (an event without its blank line still counts). */
  end(now: number): TappedEvent[] {
    this.buffer += this.decoder.decode();
    return this.events(now, true);
  }

  private events(now: number, last: boolean): TappedEvent[] {
    const out: TappedEvent[] = [];
    for (;;) {
      const match = /\r?\n\r?\n/.exec(this.buffer);
      if (!match) break;
      const end = match.index + match[0].length;
      out.push(this.read(this.buffer.slice(0, end), now));
      this.buffer = this.buffer.slice(end);
    }
    if (last && this.buffer.length > 0) {
      out.push(this.read(this.buffer, now));
      this.buffer = '';
    }
    return out;
  }

  private read(event: string, now: number): TappedEvent {
    const data = event
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '' || data === '[DONE]') return { text: event, drop: false };
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return { text: event, drop: false };
    }
    const pieces = piecesOf(value);
    if (pieces > 0) {
      this.result.streamedPieces += pieces;
      this.result.firstTokenAt ??= now;
    }
    const usage = usageOf(value);
    if (usage) {
      this.result.promptTokens = usage.prompt;
      this.result.completionTokens = usage.completion;
      const choices = (value as { choices?: unknown[] }).choices;
      if (this.hideUsage && Array.isArray(choices) && choices.length === 0) return { text: event, drop: true };
    }
    return { text: event, drop: false };
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
