// The model server's HTTP side (issue #29): OpenAI's protocol for one model, as vLLM, llama.cpp's server
// and TGI speak it — `GET /v1/models`, `POST /v1/chat/completions`, `/v1/completions`, `/v1/embeddings`,
// streamed as server-sent events like OpenAI's own — behind one bearer secret. Only node:http; the command
// (bin/portal-model-server.mjs) adds the connection file, signals and the parent's watch.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { answerTokens, base64Floats, DEFAULT_EMBEDDING_DIMENSIONS, embeddingVector } from './generate.mjs';
import { checkChatRequest, checkCompletionRequest, checkEmbeddingRequest, RequestError } from './requests.mjs';

/** A body larger than this is refused (413) before it is read to the end. */
const MAX_BODY_BYTES = 32 * 1024 * 1024;
/** A caller's request id is taken over (the gateway's, so both logs name the request alike) when it looks like one. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Longer than a client's idle keep-alive (Node's agents: 4 s, undici: 4 s), so a reused connection is never closed under it. */
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

function digest(text) {
  return createHash('sha256').update(text).digest();
}

function json(res, status, body, headers = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function refuse(res, error) {
  json(res, error.status, error.body(), error.status === 413 ? { Connection: 'close' } : {});
}

function readJson(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let bytes = 0;
    const onData = (chunk) => {
      bytes += chunk.length;
      if (bytes > MAX_BODY_BYTES) {
        // Read no further; the refusal goes out on a connection that then closes (the rest is dropped).
        req.off('data', onData);
        req.pause();
        reject(new RequestError(413, `The request body is larger than ${MAX_BODY_BYTES} bytes.`, { code: 'request_too_large' }));
        return;
      }
      chunks.push(chunk);
    };
    req.on('data', onData);
    let ended = false;
    req.on('error', reject);
    // A client that hangs up while sending: no 'end' will come.
    req.on('close', () => {
      if (!ended) reject(new RequestError(400, 'The request body was cut off.', { code: 'incomplete_body' }));
    });
    req.on('end', () => {
      ended = true;
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new RequestError(400, 'We could not parse the JSON body of your request. The body must be valid JSON.', { code: 'invalid_json' }));
      }
    });
  });
}

/**
 * writeEvent writes one server-sent event and waits while the client reads slowly (back-pressure), or
 * until it is gone.
 */
async function writeEvent(res, data) {
  if (res.destroyed) return;
  if (!res.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)) {
    await new Promise((resolve) => {
      const done = () => {
        res.off('drain', done);
        res.off('close', done);
        resolve(undefined);
      };
      res.on('drain', done);
      res.on('close', done);
    });
  }
}

/**
 * produceAnswer runs one answer: tokens from the generator up to `maxTokens`, cut before the first
 * `stop` string. `emit` receives the text as it becomes safe to send: with stop strings, the tail that
 * could still begin one is held back (a stop string is never sent, not even in part). It returns null
 * when the client went away; `progress.sentTokens` counts the tokens whose text was sent in full.
 */
async function produceAnswer({ key, leadingSpace, ignoreEos, maxTokens, stop, tokenDelayMs, gone, emit, progress }) {
  const holdBack = stop.length > 0 ? Math.max(...stop.map((item) => item.length)) - 1 : 0;
  const tokens = answerTokens(key, { leadingSpace, ignoreEos });
  const tokenEnds = [];
  let text = '';
  let emitted = 0;
  let finishReason = 'length';
  const send = async (upTo) => {
    if (upTo <= emitted) return;
    await emit(text.slice(emitted, upTo));
    emitted = upTo;
    while (progress.sentTokens < tokenEnds.length && tokenEnds[progress.sentTokens] <= emitted) progress.sentTokens += 1;
  };
  while (tokenEnds.length < maxTokens) {
    const next = tokens.next();
    if (next.done) {
      finishReason = 'stop';
      break;
    }
    if (tokenDelayMs > 0) await sleep(tokenDelayMs);
    if (gone()) return null;
    const start = text.length;
    text += next.value;
    tokenEnds.push(text.length);
    // Only a match that ends in the new token is new; it may begin in the text held back.
    let cut = -1;
    for (const item of stop) {
      const at = text.indexOf(item, Math.max(0, start - item.length + 1));
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) {
      text = text.slice(0, cut);
      finishReason = 'stop';
      break;
    }
    await send(text.length - holdBack);
    if (gone()) return null;
  }
  await send(text.length);
  if (gone()) return null;
  return { text, finishReason, completionTokens: tokenEnds.length };
}

function usage(promptTokens, completionTokens) {
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

function startStream(res, requestId) {
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Request-Id': requestId });
  // The headers leave now: a client sees the answer begin before the first token.
  res.flushHeaders();
}

/**
 * createModelServer builds the HTTP server of one model. `log` receives one record per request, when
 * it ends: never the prompt or the answer, only what was asked for and how much.
 * @param {{ model: string, secret: string, tokenDelayMs?: number, contextLength: number, log: (record: Record<string, unknown>) => void }} options
 */
export function createModelServer({ model, secret, tokenDelayMs = 0, contextLength, log }) {
  const createdSeconds = Math.floor(Date.now() / 1000);
  const secretDigest = digest(secret);
  const fingerprint = `fp_${digest(`portal-model-server ${model}`).toString('hex').slice(0, 10)}`;
  const served = { model, contextLength };
  const modelObject = { id: model, object: 'model', created: createdSeconds, owned_by: 'portal', max_model_len: contextLength };

  function authorized(req) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) {
      throw new RequestError(401, "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", {});
    }
    // Compared as digests, in constant time: the length of the secret is not told either.
    if (!timingSafeEqual(digest(match[1]), secretDigest)) throw new RequestError(401, 'Incorrect API key provided.', { code: 'invalid_api_key' });
  }

  async function chatCompletions(req, res, record, gone) {
    const request = checkChatRequest(await readJson(req), served);
    record.prompt_tokens = request.promptTokens;
    record.stream = request.stream;
    const id = `chatcmpl-${randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const base = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: fingerprint };
    const key = [model, 'chat', request.messages, request.seed];
    const progress = { sentTokens: 0 };
    const answerOptions = { key, leadingSpace: false, ignoreEos: request.ignoreEos, maxTokens: request.maxTokens, stop: request.stop, tokenDelayMs, gone, progress };
    if (!request.stream) {
      const answer = await produceAnswer({ ...answerOptions, emit: () => undefined });
      if (answer === null) return;
      record.completion_tokens = answer.completionTokens;
      json(res, 200, {
        id, object: 'chat.completion', created, model, system_fingerprint: fingerprint,
        choices: [{ index: 0, message: { role: 'assistant', content: answer.text, refusal: null }, logprobs: null, finish_reason: answer.finishReason }],
        usage: usage(request.promptTokens, answer.completionTokens),
      }, { 'X-Request-Id': record.request_id });
      return;
    }
    // With include_usage, OpenAI puts `usage: null` on every chunk and the figures on one more at the end.
    const withUsage = request.includeUsage ? { usage: null } : {};
    const chunk = (delta, finishReason) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...withUsage });
    startStream(res, record.request_id);
    record.completion_tokens = 0;
    await writeEvent(res, chunk({ role: 'assistant', content: '', refusal: null }, null));
    const answer = await produceAnswer({ ...answerOptions, emit: (text) => writeEvent(res, chunk({ content: text }, null)) });
    record.completion_tokens = progress.sentTokens;
    if (answer === null) return;
    record.completion_tokens = answer.completionTokens;
    await writeEvent(res, chunk({}, answer.finishReason));
    if (request.includeUsage) await writeEvent(res, { ...base, choices: [], usage: usage(request.promptTokens, answer.completionTokens) });
    await writeEvent(res, '[DONE]');
    res.end();
  }

  async function completions(req, res, record, gone) {
    const request = checkCompletionRequest(await readJson(req), served);
    const promptTokens = request.promptTokens.reduce((sum, count) => sum + count, 0);
    record.prompt_tokens = promptTokens;
    record.stream = request.stream;
    record.completion_tokens = 0;
    const id = `cmpl-${randomBytes(12).toString('hex')}`;
    const created = Math.floor(Date.now() / 1000);
    const base = { id, object: 'text_completion', created, model, system_fingerprint: fingerprint };
    const withUsage = request.includeUsage ? { usage: null } : {};
    const chunk = (index, text, finishReason) => ({ ...base, choices: [{ text, index, logprobs: null, finish_reason: finishReason }], ...withUsage });
    if (request.stream) startStream(res, record.request_id);
    const choices = [];
    let completionTokens = 0;
    // Each prompt is its own choice, answered one after the other.
    for (const [index, prompt] of request.prompts.entries()) {
      const progress = { sentTokens: 0 };
      const answer = await produceAnswer({
        key: [model, 'completion', prompt, request.seed], leadingSpace: true, ignoreEos: request.ignoreEos, maxTokens: request.maxTokens,
        stop: request.stop, tokenDelayMs, gone, progress,
        emit: request.stream ? (text) => writeEvent(res, chunk(index, text, null)) : () => undefined,
      });
      if (answer === null) {
        if (request.stream) record.completion_tokens = completionTokens + progress.sentTokens;
        return;
      }
      completionTokens += answer.completionTokens;
      if (request.stream) {
        record.completion_tokens = completionTokens;
        await writeEvent(res, chunk(index, '', answer.finishReason));
      }
      choices.push({ text: answer.text, index, logprobs: null, finish_reason: answer.finishReason });
    }
    record.completion_tokens = completionTokens;
    if (!request.stream) {
      json(res, 200, { ...base, choices, usage: usage(promptTokens, completionTokens) }, { 'X-Request-Id': record.request_id });
      return;
    }
    if (request.includeUsage) await writeEvent(res, { ...base, choices: [], usage: usage(promptTokens, completionTokens) });
    await writeEvent(res, '[DONE]');
    res.end();
  }

  async function embeddings(req, res, record) {
    const request = checkEmbeddingRequest(await readJson(req), served);
    const promptTokens = request.promptTokens.reduce((sum, count) => sum + count, 0);
    record.prompt_tokens = promptTokens;
    const dimensions = request.dimensions ?? DEFAULT_EMBEDDING_DIMENSIONS;
    const data = request.inputs.map((input, index) => {
      const vector = embeddingVector(model, input, dimensions);
      return { object: 'embedding', index, embedding: request.format === 'base64' ? base64Floats(vector) : vector };
    });
    json(res, 200, { object: 'list', data, model, usage: { prompt_tokens: promptTokens, total_tokens: promptTokens } }, { 'X-Request-Id': record.request_id });
  }

  const routes = {
    '/v1/models': { GET: (_req, res, record) => json(res, 200, { object: 'list', data: [modelObject] }, { 'X-Request-Id': record.request_id }) },
    '/v1/chat/completions': { POST: chatCompletions },
    '/v1/completions': { POST: completions },
    '/v1/embeddings': { POST: embeddings },
  };

  async function handle(req, res, record, gone) {
    const path = record.path;
    if (path === '/health' && (req.method === 'GET' || req.method === 'HEAD')) {
      json(res, 200, { status: 'ok' });
      return;
    }
    authorized(req);
    const route = routes[path];
    if (route === undefined && path.startsWith('/v1/models/') && req.method === 'GET') {
      let id;
      try {
        id = decodeURIComponent(path.slice('/v1/models/'.length));
      } catch {
        id = path.slice('/v1/models/'.length);
      }
      if (id !== model) throw new RequestError(404, `The model '${id}' does not exist`, { param: 'model', code: 'model_not_found' });
      json(res, 200, modelObject, { 'X-Request-Id': record.request_id });
      return;
    }
    if (route === undefined) throw new RequestError(404, `Invalid URL (${req.method} ${path})`, {});
    const handler = route[req.method ?? ''];
    if (handler === undefined) throw new RequestError(405, `Method ${req.method} is not allowed on ${path}; use ${Object.keys(route).join(', ')}.`, {});
    await handler(req, res, record, gone);
  }

  const server = http.createServer((req, res) => {
    const startedAt = process.hrtime.bigint();
    const given = req.headers['x-request-id'];
    const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : `req_${randomBytes(12).toString('hex')}`;
    const record = { request_id: requestId, method: req.method, path: (req.url ?? '/').split('?')[0], status: 0, prompt_tokens: 0, completion_tokens: 0 };
    // A client that hangs up before the end: generation stops at the next token, nothing more is written.
    let closed = false;
    const gone = () => closed || res.destroyed;
    const handled = handle(req, res, record, gone).catch((error) => {
      if (gone()) return;
      if (res.headersSent) {
        // A stream already under way cannot change its status: end it where it broke.
        res.destroy();
        return;
      }
      if (error instanceof RequestError) {
        record.error_code = error.code ?? error.type;
        refuse(res, error);
        return;
      }
      record.error = error instanceof Error ? error.message : String(error);
      refuse(res, new RequestError(500, 'The model server failed on this request.', { type: 'server_error' }));
    });
    res.on('close', () => {
      closed = true;
      // The gateway's health probes (every few seconds) are not calls: not logged.
      if (record.path === '/health') return;
      const aborted = !res.writableFinished;
      const ms = Number((process.hrtime.bigint() - startedAt) / 1000n) / 1000;
      // Logged once the handler has stopped too, so the record holds the tokens actually sent.
      void handled.then(() => log({ ...record, status: res.statusCode, ms, ...(aborted ? { aborted: true } : {}) }));
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1000;
  return server;
}
