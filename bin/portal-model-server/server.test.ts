// The deterministic model server as the portal's gateway and a company's software will meet it: the real
// script started as a child process (port 0, a connection file in a scratch folder), called with the
// official `openai` client — models, chat and text completions, streamed and not, embeddings in both
// encodings — plus what a client gets wrong (401, 400s naming the parameter), a client that hangs up
// mid-stream, and the job side: the connection file's modes, SIGTERM and the parent's end.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import fc from 'fast-check';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { countChatTokens, countTokens } from './tokens.mjs';

const SCRIPT = path.resolve(import.meta.dirname, '../portal-model-server.mjs');
const MODEL = 'portal/test-model-7b';
const SECRET = 'test-secret-0123456789abcdef';

interface LogRecord {
  request_id: string;
  method: string;
  path: string;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  ms: number;
  aborted?: boolean;
}

interface Running {
  child: ChildProcess;
  port: number;
  file: string;
  folder: string;
  logs: LogRecord[];
  exited: Promise<number | null>;
  client: OpenAI;
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'portal-model-server-'));
const running: Running[] = [];

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** startServer runs the script as the portal would and waits for its connection file. */
async function startServer(name: string, args: string[] = []): Promise<Running> {
  const folder = path.join(scratch, name, '.portal-model');
  const file = path.join(folder, 'connection.json');
  const child = spawn(process.execPath, [SCRIPT, '--model', MODEL, '--port', '0', '--connection-file', file, ...args], {
    env: { PATH: process.env.PATH, PORTAL_MODEL_SECRET: SECRET, PORTAL_MODEL_PARENT_PID: String(process.pid) } as unknown as NodeJS.ProcessEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: LogRecord[] = [];
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
    const lines = stderr.split('\n');
    stderr = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('{')) logs.push(JSON.parse(line) as LogRecord);
  });
  child.stdout.resume();
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve((exitCode = code))));
  const connection = await waitFor(`${name}'s connection file`, () => {
    if (exitCode !== undefined) throw new Error(`the server ended with ${exitCode}: ${stderr}`);
    return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { port: number }) : undefined;
  });
  const client = new OpenAI({ baseURL: `http://127.0.0.1:${connection.port}/v1`, apiKey: SECRET, maxRetries: 0, timeout: 5000 });
  const server = { child, port: connection.port, file, folder, logs, exited, client };
  running.push(server);
  return server;
}

function raw(server: Running, urlPath: string, init: RequestInit & { auth?: string | null } = {}) {
  const { auth = SECRET, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (auth !== null) headers.set('Authorization', `Bearer ${auth}`);
  if (rest.body !== undefined) headers.set('Content-Type', 'application/json');
  return fetch(`http://127.0.0.1:${server.port}${urlPath}`, { ...rest, headers });
}

function norm(vector: ArrayLike<number>): number {
  let sum = 0;
  for (let i = 0; i < vector.length; i += 1) sum += vector[i]! ** 2;
  return Math.sqrt(sum);
}

const MESSAGES = [
  { role: 'system' as const, content: 'You are terse.' },
  { role: 'user' as const, content: 'Hello, GPU centre! How are you?' },
];

let main: Running;
let slow: Running;

beforeAll(async () => {
  // The slow one spends 20 ms on each token: long enough to hang up mid-stream.
  [main, slow] = await Promise.all([startServer('main', ['--context-length', '256']), startServer('slow', ['--token-delay-ms', '20'])]);
});

afterAll(async () => {
  for (const server of running) if (server.child.exitCode === null) server.child.kill('SIGKILL');
  await Promise.all(running.map((server) => server.exited));
  fs.rmSync(scratch, { recursive: true, force: true });
});

describe('the OpenAI protocol, through the official client', () => {
  it('lists the one model it serves', async () => {
    const models = await main.client.models.list();
    expect(models.data.map((model) => [model.id, model.object])).toEqual([[MODEL, 'model']]);
    expect((await main.client.models.retrieve(MODEL)).id).toBe(MODEL);
  });

  it('answers a chat the same way twice, with usage counted by the rule', async () => {
    const first = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES });
    const second = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES });
    const content = first.choices[0]!.message.content!;
    expect(first.object).toBe('chat.completion');
    expect(first.choices[0]!.message.role).toBe('assistant');
    expect(content).toMatch(/^[A-Z][a-z]+[ a-zA-Z,.]*\.$/);
    expect(second.choices[0]!.message.content).toBe(content);
    expect(second.id).not.toBe(first.id);
    expect(first.choices[0]!.finish_reason).toBe('stop');
    // "You are terse ." 4 and "Hello , GPU centre ! How are you ?" 9, plus 4 for each of the two messages.
    expect(countChatTokens(MESSAGES)).toBe(21);
    expect(first.usage).toEqual({ prompt_tokens: 21, completion_tokens: countTokens(content), total_tokens: 21 + countTokens(content) });
    expect(first.usage!.completion_tokens).toBeLessThanOrEqual(64);
    // Another prompt, another answer.
    const other = await main.client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'Something else.' }] });
    expect(other.choices[0]!.message.content).not.toBe(content);
  });

  it('streams the same answer as OpenAI streams it, with the usage chunk last', async () => {
    const whole = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES });
    const stream = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES, stream: true, stream_options: { include_usage: true } });
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0]!.id)).toBe(true);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(whole.choices[0]!.message.content);
    const [finish, last] = chunks.slice(-2);
    expect(finish!.choices[0]!.finish_reason).toBe('stop');
    expect(last!.choices).toEqual([]);
    expect(last!.usage).toEqual(whole.usage);
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
    // One content chunk per token: time to first token and tokens per second mean what they say.
    expect(chunks.filter((chunk) => chunk.choices[0]?.delta.content).length).toBe(whole.usage!.completion_tokens);
  });

  it('completes a text prompt, streamed and not', async () => {
    const prompt = 'The cluster said';
    const whole = await main.client.completions.create({ model: MODEL, prompt, max_tokens: 10 });
    expect(whole.object).toBe('text_completion');
    expect(whole.choices[0]!.text).toMatch(/^ /);
    expect(whole.usage).toEqual({ prompt_tokens: 3, completion_tokens: 10, total_tokens: 13 });
    expect(whole.choices[0]!.finish_reason).toBe('length');
    const stream = await main.client.completions.create({ model: MODEL, prompt, max_tokens: 10, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.text ?? '';
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(whole.choices[0]!.text);
    expect(usage).toEqual(whole.usage);
  });

  it('embeds as base64 by the client default and as floats, unit length, the same numbers', async () => {
    const input = ['GPU hours in Germany', 'tokens in the same ledger'];
    const decoded = await main.client.embeddings.create({ model: MODEL, input });
    const floats = await main.client.embeddings.create({ model: MODEL, input, encoding_format: 'float' });
    expect(decoded.data.map((item) => item.index)).toEqual([0, 1]);
    expect(decoded.usage).toEqual({ prompt_tokens: 4 + 5, total_tokens: 4 + 5 });
    for (const [i, item] of decoded.data.entries()) {
      expect(item.embedding).toHaveLength(64);
      expect(norm(item.embedding)).toBeCloseTo(1, 5);
      expect(Array.from(item.embedding)).toEqual(floats.data[i]!.embedding);
    }
    const short = await main.client.embeddings.create({ model: MODEL, input: 'GPU hours in Germany', dimensions: 8, encoding_format: 'float' });
    expect(short.data[0]!.embedding).toHaveLength(8);
    expect(norm(short.data[0]!.embedding)).toBeCloseTo(1, 5);
  });

  it('bounds the answer by max_tokens and max_completion_tokens', async () => {
    const five = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES, max_tokens: 5 });
    expect(five.usage!.completion_tokens).toBe(5);
    expect(countTokens(five.choices[0]!.message.content!)).toBe(5);
    expect(five.choices[0]!.finish_reason).toBe('length');
    const three = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES, max_completion_tokens: 3 });
    expect(three.usage!.completion_tokens).toBe(3);
    // A shorter answer is the start of the longer one.
    const whole = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES });
    expect(whole.choices[0]!.message.content!.startsWith(five.choices[0]!.message.content!)).toBe(true);
  });

  it('stops before a stop string, streamed and not, never sending part of it', async () => {
    const whole = (await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES })).choices[0]!.message.content!;
    const third = / [a-z]+/.exec(whole.slice(whole.indexOf(' ', whole.indexOf(' ') + 1)))![0];
    const stop = [third, 'never said'];
    const cut = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES, stop });
    expect(cut.choices[0]!.message.content).toBe(whole.slice(0, whole.indexOf(third)));
    expect(cut.choices[0]!.finish_reason).toBe('stop');
    const stream = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES, stop, stream: true });
    let text = '';
    let finishReason: string | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finishReason = chunk.choices[0]?.finish_reason ?? finishReason;
    }
    expect(text).toBe(cut.choices[0]!.message.content);
    expect(finishReason).toBe('stop');
  });

  it('finds a stop string that spans tokens, and streams no part of it', async () => {
    const whole = (await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES })).choices[0]!.message.content!;
    // The end of the fourth word, the space and the start of the fifth: three tokens' worth of text.
    const words = whole.split(' ');
    const spanning = `${words[3]!.slice(-2)} ${words[4]!.slice(0, 2)}`;
    const expected = whole.slice(0, whole.indexOf(spanning));
    const cut = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES, stop: spanning });
    expect(cut.choices[0]!.message.content).toBe(expected);
    const deltas: string[] = [];
    const stream = await main.client.chat.completions.create({ model: MODEL, messages: MESSAGES, stop: spanning, stream: true });
    for await (const chunk of stream) deltas.push(chunk.choices[0]?.delta.content ?? '');
    expect(deltas.join('')).toBe(expected);
  });
});

describe('what a client gets wrong', () => {
  it('refuses a missing or wrong secret with 401, and answers /health without one', async () => {
    const wrong = new OpenAI({ baseURL: `http://127.0.0.1:${main.port}/v1`, apiKey: 'not-the-secret', maxRetries: 0 });
    await expect(wrong.models.list()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key', type: 'invalid_request_error' });
    const none = await raw(main, '/v1/chat/completions', { method: 'POST', auth: null, body: '{}' });
    expect(none.status).toBe(401);
    expect(await none.json()).toEqual({ error: { message: expect.stringContaining('API key') as unknown, type: 'invalid_request_error', param: null, code: null } });
    const health = await raw(main, '/health', { auth: null });
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
  });

  it.each([
    ['n > 1', { messages: MESSAGES, n: 2 }, 400, 'n', 'unsupported_parameter'],
    ['no messages', {}, 400, 'messages', 'missing_required_parameter'],
    ['empty messages', { messages: [] }, 400, 'messages', 'invalid_value'],
    ['an unknown role', { messages: [{ role: 'robot', content: 'hi' }] }, 400, 'messages[0].role', 'invalid_value'],
    ['an image part', { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }, 400, 'messages[0].content[0].type', 'unsupported_parameter'],
    ['max_tokens as text', { messages: MESSAGES, max_tokens: 'ten' }, 400, 'max_tokens', 'invalid_type'],
    ['max_tokens 0', { messages: MESSAGES, max_tokens: 0 }, 400, 'max_tokens', 'invalid_value'],
    ['stream_options without stream', { messages: MESSAGES, stream_options: { include_usage: true } }, 400, 'stream_options', 'invalid_value'],
    ['more than the context', { messages: MESSAGES, max_tokens: 250 }, 400, 'max_tokens', 'context_length_exceeded'],
    ['a prompt longer than the context', { messages: [{ role: 'user', content: 'word '.repeat(300) }] }, 400, 'messages', 'context_length_exceeded'],
    ['tools', { messages: MESSAGES, tools: [{ type: 'function', function: { name: 'f' } }] }, 400, 'tools', 'unsupported_parameter'],
    ['an unknown model', { model: 'gpt-4o', messages: MESSAGES }, 404, 'model', 'model_not_found'],
  ])('chat with %s: %i naming %s', async (_what, body, status, param, code) => {
    await expect(main.client.chat.completions.create({ model: MODEL, ...body } as unknown as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming)).rejects.toMatchObject({ status, param, code });
  });

  it('names the parameter for completions and embeddings too', async () => {
    await expect(main.client.completions.create({ model: MODEL } as unknown as OpenAI.CompletionCreateParamsNonStreaming)).rejects.toMatchObject({ status: 400, param: 'prompt' });
    await expect(main.client.completions.create({ model: MODEL, prompt: [[1, 2, 3]] } as unknown as OpenAI.CompletionCreateParamsNonStreaming)).rejects.toMatchObject({ status: 400, param: 'prompt' });
    await expect(main.client.embeddings.create({ model: MODEL } as unknown as OpenAI.EmbeddingCreateParams)).rejects.toMatchObject({ status: 400, param: 'input' });
    await expect(main.client.embeddings.create({ model: MODEL, input: 'x', encoding_format: 'int8' } as unknown as OpenAI.EmbeddingCreateParams)).rejects.toMatchObject({ status: 400, param: 'encoding_format' });
  });

  it.each([
    ['bad JSON', 400, '/v1/chat/completions', 'POST', '{"model": '],
    ['a JSON array', 400, '/v1/embeddings', 'POST', '[1, 2]'],
    ['an unknown path', 404, '/v1/images/generations', 'POST', '{}'],
    ['the wrong method', 405, '/v1/chat/completions', 'GET', undefined],
  ])('answers %s with %i in OpenAI’s error shape', async (_what, status, urlPath, method, body) => {
    const response = await raw(main, urlPath, { method, body });
    expect(response.status).toBe(status);
    expect(await response.json()).toMatchObject({ error: { message: expect.any(String) as unknown, type: 'invalid_request_error', param: null } });
  });

  it('answers any JSON body with a 200 or an OpenAI error, never a 500', async () => {
    // Bodies near a valid one: each known parameter given any JSON value, or left out.
    const anything = fc.jsonValue({ maxDepth: 3 });
    const body = fc.record(
      {
        model: fc.oneof(fc.constant(MODEL), anything), messages: fc.oneof(fc.constant(MESSAGES), fc.array(fc.record({ role: fc.oneof(fc.constant('user'), anything), content: anything }, { requiredKeys: [] }), { maxLength: 3 }), anything),
        prompt: anything, input: anything, max_tokens: anything, max_completion_tokens: anything, n: anything, stop: anything, stream: fc.constant(false),
        stream_options: anything, seed: anything, encoding_format: anything, dimensions: anything, response_format: anything, tools: anything, logprobs: anything,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v1/chat/completions', '/v1/completions', '/v1/embeddings'), fc.oneof(body, anything), async (urlPath, value) => {
        const response = await raw(main, urlPath, { method: 'POST', body: JSON.stringify(value) });
        const answer = (await response.json()) as { error?: { message: string; type: string; param: string | null; code: string | null } };
        expect(response.status === 200 || (response.status >= 400 && response.status < 500 && typeof answer.error?.message === 'string')).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('logs each request without its text, and never a 500 for all the above', () => {
    expect(main.logs.length).toBeGreaterThan(20);
    expect(main.logs.every((record) => record.status < 500)).toBe(true);
    const text = JSON.stringify(main.logs);
    expect(text).not.toContain('GPU centre');
    expect(text).not.toContain(SECRET);
  });
});

describe('a client that hangs up mid-stream', () => {
  it('stops the generation: the log records the tokens sent, far fewer than asked for', async () => {
    const controller = new AbortController();
    const body = { model: MODEL, messages: MESSAGES, max_tokens: 200, ignore_eos: true, stream: true as const };
    const stream = await slow.client.chat.completions.create(body, { signal: controller.signal });
    let received = 0;
    // The client ends the iteration quietly once its own signal aborted it.
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta.content) received += 1;
      if (received === 3) controller.abort();
    }
    expect(received).toBe(3);
    const abortedAt = Date.now();
    // All 200 tokens would take 4 s; the generation ends at the next token after the hang-up.
    const record = await waitFor('the aborted request in the log', () => slow.logs.find((entry) => entry.aborted === true), 3000);
    expect(Date.now() - abortedAt).toBeLessThan(2000);
    expect(record.completion_tokens).toBeGreaterThanOrEqual(3);
    expect(record.completion_tokens).toBeLessThan(20);
    // One record for that request, written once its generation had stopped.
    await sleep(100);
    expect(slow.logs.filter((entry) => entry.request_id === record.request_id)).toHaveLength(1);
  });
});

describe('the job side', () => {
  it('writes the connection file 0600 in a 0700 folder, with what the gateway needs', () => {
    expect(fs.statSync(main.folder).mode & 0o777).toBe(0o700);
    expect(fs.statSync(main.file).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(main.file, 'utf8'))).toEqual({ host: '127.0.0.1', port: main.port, model: MODEL, pid: main.child.pid, secret: SECRET });
    expect(fs.readdirSync(main.folder)).toEqual(['connection.json']);
  });

  it('removes its file and ends with 0 on SIGTERM', async () => {
    slow.child.kill('SIGTERM');
    expect(await slow.exited).toBe(0);
    expect(fs.existsSync(slow.file)).toBe(false);
  });

  it('ends by itself when the parent it was given is gone', async () => {
    const folder = path.join(scratch, 'orphan', '.portal-model');
    const file = path.join(folder, 'connection.json');
    // A parent that starts the server, waits for its file, and dies without stopping it.
    const parent = `
      const { spawn } = require('node:child_process');
      const fs = require('node:fs');
      const child = spawn(process.execPath, ${JSON.stringify([SCRIPT, '--model', MODEL, '--connection-file', file])}, {
        env: { PORTAL_MODEL_SECRET: ${JSON.stringify(SECRET)}, PORTAL_MODEL_PARENT_PID: String(process.pid) }, detached: true, stdio: 'ignore' });
      child.unref();
      const wait = setInterval(() => { if (fs.existsSync(${JSON.stringify(file)})) { console.log(fs.readFileSync(${JSON.stringify(file)}, 'utf8')); clearInterval(wait); process.exit(0); } }, 20);`;
    const launcher = spawn(process.execPath, ['-e', parent], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    launcher.stdout.setEncoding('utf8').on('data', (text: string) => (output += text));
    await new Promise((resolve) => launcher.on('exit', resolve));
    const { port } = JSON.parse(output) as { port: number };
    expect(fs.existsSync(file)).toBe(true);
    await waitFor('the orphan to remove its file', () => (fs.existsSync(file) ? undefined : true), 4000);
    // Ended: nothing listens on its port any more. (Whether the process is gone from the table is the
    // reaper's business: an orphan's zombie waits for whatever adopted it.)
    const deadline = Date.now() + 2000;
    let listening = true;
    while (listening && Date.now() < deadline) {
      listening = await fetch(`http://127.0.0.1:${port}/health`).then(() => true, () => false);
      if (listening) await sleep(20);
    }
    expect(listening).toBe(false);
  });
});
