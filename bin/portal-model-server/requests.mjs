// What a request to the model server may say, checked before any work (issue #29). Each refusal is an
// OpenAI error — `{error: {message, type, param, code}}` with OpenAI's own codes and the parameter's
// name — so a client (the official `openai` package, the portal's gateway) shows what to fix. Bad
// input is never a 500. Sampling parameters (temperature, top_p, penalties, …) are accepted and
// ignored: the answer is a function of the request's text alone.
import { countChatTokens, countPromptTokens } from './tokens.mjs';

/** How many tokens an answer has unless `max_tokens` or `max_completion_tokens` says otherwise. */
export const DEFAULT_MAX_TOKENS = 64;
/** OpenAI's own limits on `stop` strings, prompts and embedding inputs in one request. */
const MAX_STOP_STRINGS = 4;
const MAX_PROMPTS = 2048;
const MAX_EMBEDDING_INPUTS = 2048;
const MAX_EMBEDDING_DIMENSIONS = 4096;
const CHAT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];

/** RequestError is a refusal in OpenAI's shape, with the HTTP status it is answered with. */
export class RequestError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {{ param?: string | null, code?: string | null, type?: string }} [details]
   */
  constructor(status, message, { param = null, code = null, type = 'invalid_request_error' } = {}) {
    super(message);
    this.status = status;
    this.param = param;
    this.code = code;
    this.type = type;
  }

  /** body is the error as OpenAI answers it. */
  body() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

function missing(param) {
  return new RequestError(400, `Missing required parameter: '${param}'.`, { param, code: 'missing_required_parameter' });
}

function kindOf(value) {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'an integer';
  return { string: 'a string', number: 'a decimal', boolean: 'a boolean', object: 'an object' }[typeof value] ?? typeof value;
}

function invalidType(param, expected, value) {
  return new RequestError(400, `Invalid type for '${param}': expected ${expected}, but got ${kindOf(value)} instead.`, { param, code: 'invalid_type' });
}

function invalidValue(param, message) {
  return new RequestError(400, message, { param, code: 'invalid_value' });
}

function unsupported(param, what) {
  return new RequestError(400, `${what} is not supported by this model server.`, { param, code: 'unsupported_parameter' });
}

/** given is true for a parameter that is present and not null (OpenAI treats null as left out). */
function given(value) {
  return value !== undefined && value !== null;
}

function checkModel(body, servedModel) {
  if (!given(body.model)) throw missing('model');
  if (typeof body.model !== 'string') throw invalidType('model', 'a string', body.model);
  if (body.model !== servedModel) {
    throw new RequestError(404, `The model \`${body.model}\` does not exist or you do not have access to it.`, { param: 'model', code: 'model_not_found' });
  }
}

function positiveInteger(body, param) {
  const value = body[param];
  if (!given(value)) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalidType(param, 'an integer', value);
  if (value < 1) throw invalidValue(param, `Invalid '${param}': integer below minimum value. Expected a value >= 1, but got ${value} instead.`);
  return value;
}

function booleanParam(body, param) {
  const value = body[param];
  if (!given(value)) return false;
  if (typeof value !== 'boolean') throw invalidType(param, 'a boolean', value);
  return value;
}

/** checkCommon reads what chat and text completions share: n, stop, streaming, the length bounds. */
function checkCommon(body, lengthParams) {
  const n = positiveInteger(body, 'n');
  if (n !== undefined && n > 1) throw unsupported('n', 'More than one choice (n > 1)');
  let stop = [];
  if (given(body.stop)) {
    stop = typeof body.stop === 'string' ? [body.stop] : body.stop;
    if (!Array.isArray(stop) || stop.some((item) => typeof item !== 'string')) throw invalidType('stop', 'a string or an array of strings', body.stop);
    if (stop.length > MAX_STOP_STRINGS) throw invalidValue('stop', `Invalid 'stop': array too long. Expected an array with maximum length ${MAX_STOP_STRINGS}, but got an array with length ${stop.length} instead.`);
    if (stop.some((item) => item.length === 0)) throw invalidValue('stop', "Invalid 'stop': a stop string must not be empty.");
  }
  const stream = booleanParam(body, 'stream');
  let includeUsage = false;
  if (given(body.stream_options)) {
    if (!stream) throw invalidValue('stream_options', "The 'stream_options' parameter is only allowed when 'stream' is enabled.");
    if (typeof body.stream_options !== 'object' || Array.isArray(body.stream_options)) throw invalidType('stream_options', 'an object', body.stream_options);
    includeUsage = booleanParam(body.stream_options, 'include_usage');
  }
  // max_completion_tokens replaced max_tokens in OpenAI's chat API; either bounds the answer.
  let maxTokens;
  let maxTokensParam = lengthParams[0];
  for (const param of lengthParams) {
    const value = positiveInteger(body, param);
    if (value !== undefined && maxTokens === undefined) {
      maxTokens = value;
      maxTokensParam = param;
    }
  }
  if (given(body.seed) && (typeof body.seed !== 'number' || !Number.isInteger(body.seed))) throw invalidType('seed', 'an integer', body.seed);
  // vLLM's extension: go on to max_tokens past the answer's natural end (long streams for tests and benchmarks).
  const ignoreEos = booleanParam(body, 'ignore_eos');
  return { stop, stream, includeUsage, maxTokens, maxTokensParam, seed: given(body.seed) ? body.seed : null, ignoreEos };
}

/**
 * boundTokens fits the answer into the context window: a request whose prompt and asked-for answer do
 * not fit is refused (OpenAI's `context_length_exceeded`); one that did not ask gets the default, or
 * what room is left.
 */
function boundTokens(common, promptTokens, contextLength, promptParam) {
  const asked = common.maxTokens;
  const room = contextLength - promptTokens;
  if (room < 1 || (asked !== undefined && asked > room)) {
    const answer = asked ?? 1;
    throw new RequestError(
      400,
      `This model's maximum context length is ${contextLength} tokens. However, you requested ${promptTokens + answer} tokens (${promptTokens} in the ${promptParam}, ${answer} in the completion). Please reduce the length of the ${promptParam} or completion.`,
      { param: asked !== undefined && promptTokens < contextLength ? common.maxTokensParam : promptParam, code: 'context_length_exceeded' },
    );
  }
  return asked ?? Math.min(DEFAULT_MAX_TOKENS, room);
}

function checkObject(body) {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new RequestError(400, 'The request body must be a JSON object.', { code: 'invalid_type' });
  }
}

function checkMessage(message, index) {
  const at = `messages[${index}]`;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) throw invalidType(at, 'an object', message);
  if (!given(message.role)) throw missing(`${at}.role`);
  if (!CHAT_ROLES.includes(message.role)) {
    throw invalidValue(`${at}.role`, `Invalid value: '${String(message.role)}'. Supported values are: ${CHAT_ROLES.map((role) => `'${role}'`).join(', ')}.`);
  }
  const { content } = message;
  if (!given(content)) {
    // Only the assistant may have said nothing (it called a tool instead).
    if (message.role !== 'assistant') throw missing(`${at}.content`);
  } else if (Array.isArray(content)) {
    content.forEach((part, partIndex) => {
      const partAt = `${at}.content[${partIndex}]`;
      if (typeof part !== 'object' || part === null) throw invalidType(partAt, 'an object', part);
      if (part.type !== 'text') throw unsupported(`${partAt}.type`, `A content part of type '${String(part.type)}' (this model reads text only)`);
      if (typeof part.text !== 'string') throw invalidType(`${partAt}.text`, 'a string', part.text);
    });
  } else if (typeof content !== 'string') {
    throw invalidType(`${at}.content`, 'a string or an array of content parts', content);
  }
  if (given(message.name) && typeof message.name !== 'string') throw invalidType(`${at}.name`, 'a string', message.name);
}

/**
 * checkChatRequest checks a `POST /v1/chat/completions` body and returns what the answer needs.
 * @param {unknown} body
 * @param {{ model: string, contextLength: number }} server
 */
export function checkChatRequest(body, { model, contextLength }) {
  checkObject(body);
  checkModel(body, model);
  if (!given(body.messages)) throw missing('messages');
  if (!Array.isArray(body.messages)) throw invalidType('messages', 'an array', body.messages);
  if (body.messages.length === 0) throw invalidValue('messages', "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.");
  body.messages.forEach(checkMessage);
  if (given(body.tools) && !(Array.isArray(body.tools) && body.tools.length === 0)) throw unsupported('tools', 'Calling tools');
  if (given(body.functions)) throw unsupported('functions', 'Calling functions');
  if (booleanParam(body, 'logprobs')) throw unsupported('logprobs', 'Returning log probabilities');
  if (given(body.response_format) && body.response_format.type !== 'text') throw unsupported('response_format', 'A response format other than text');
  const common = checkCommon(body, ['max_completion_tokens', 'max_tokens']);
  const promptTokens = countChatTokens(body.messages);
  const maxTokens = boundTokens(common, promptTokens, contextLength, 'messages');
  return { ...common, maxTokens, promptTokens, messages: body.messages };
}

/**
 * checkCompletionRequest checks a `POST /v1/completions` body: `prompt` a string or an array of strings,
 * each answered as its own choice.
 * @param {unknown} body
 * @param {{ model: string, contextLength: number }} server
 */
export function checkCompletionRequest(body, { model, contextLength }) {
  checkObject(body);
  checkModel(body, model);
  if (!given(body.prompt)) throw missing('prompt');
  const prompts = typeof body.prompt === 'string' ? [body.prompt] : body.prompt;
  if (!Array.isArray(prompts) || prompts.some((prompt) => typeof prompt !== 'string')) {
    throw invalidType('prompt', 'a string or an array of strings (this model server takes no token arrays)', body.prompt);
  }
  if (prompts.length === 0) throw invalidValue('prompt', "Invalid 'prompt': empty array. Expected an array with minimum length 1, but got an empty array instead.");
  if (prompts.length > MAX_PROMPTS) throw invalidValue('prompt', `Invalid 'prompt': array too long. Expected an array with maximum length ${MAX_PROMPTS}, but got an array with length ${prompts.length} instead.`);
  if (booleanParam(body, 'echo')) throw unsupported('echo', 'Echoing the prompt');
  if (given(body.suffix)) throw unsupported('suffix', 'A suffix');
  if (given(body.logprobs)) throw unsupported('logprobs', 'Returning log probabilities');
  const bestOf = positiveInteger(body, 'best_of');
  if (bestOf !== undefined && bestOf > 1) throw unsupported('best_of', 'More than one candidate (best_of > 1)');
  const common = checkCommon(body, ['max_tokens']);
  // Each prompt is answered on its own, so each must fit the window with its answer.
  const promptTokens = prompts.map((prompt) => countPromptTokens(prompt));
  const maxTokens = boundTokens(common, promptTokens.reduce((longest, count) => Math.max(longest, count), 0), contextLength, 'prompt');
  return { ...common, maxTokens, prompts, promptTokens };
}

/**
 * checkEmbeddingRequest checks a `POST /v1/embeddings` body: `input` a non-empty string or an array of
 * them, `encoding_format` float or base64, `dimensions` optional.
 * @param {unknown} body
 * @param {{ model: string, contextLength: number }} server
 */
export function checkEmbeddingRequest(body, { model, contextLength }) {
  checkObject(body);
  checkModel(body, model);
  if (!given(body.input)) throw missing('input');
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (!Array.isArray(inputs) || inputs.some((input) => typeof input !== 'string')) {
    throw invalidType('input', 'a string or an array of strings (this model server takes no token arrays)', body.input);
  }
  if (inputs.length === 0) throw invalidValue('input', "Invalid 'input': empty array. Expected an array with minimum length 1, but got an empty array instead.");
  if (inputs.length > MAX_EMBEDDING_INPUTS) throw invalidValue('input', `Invalid 'input': array too long. Expected an array with maximum length ${MAX_EMBEDDING_INPUTS}, but got an array with length ${inputs.length} instead.`);
  if (inputs.some((input) => input.length === 0)) throw invalidValue('input', "Invalid 'input': an input must not be an empty string.");
  const format = given(body.encoding_format) ? body.encoding_format : 'float';
  if (format !== 'float' && format !== 'base64') throw invalidValue('encoding_format', `Invalid value: '${String(format)}'. Supported values are: 'float' and 'base64'.`);
  const dimensions = positiveInteger(body, 'dimensions');
  if (dimensions !== undefined && dimensions > MAX_EMBEDDING_DIMENSIONS) {
    throw invalidValue('dimensions', `Invalid 'dimensions': integer above maximum value. Expected a value <= ${MAX_EMBEDDING_DIMENSIONS}, but got ${dimensions} instead.`);
  }
  const promptTokens = inputs.map((input) => countPromptTokens(input));
  const longest = promptTokens.reduce((most, count) => Math.max(most, count), 0);
  if (longest > contextLength) {
    throw new RequestError(400, `This model's maximum context length is ${contextLength} tokens, however you requested ${longest} tokens in one input. Please reduce your input.`, { param: 'input', code: 'context_length_exceeded' });
  }
  return { inputs, promptTokens, format, dimensions };
}
