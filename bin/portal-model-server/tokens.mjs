// The model server's token rule, one for everything it counts (issue #29). The gateway imports this
// module to count a request's input tokens before forwarding it, so its reservation and the server's
// `usage` agree token for token.
//
// The rule: a token is a run of letters, combining marks and digits ("GPU", "H100", "naïve"), or any
// other single character that is not white space ("," "." "€" "😀" — one per code point). White space
// separates tokens and is never one. A chat message costs CHAT_MESSAGE_OVERHEAD_TOKENS more for its
// role and the separators a chat template puts around it.

/** CHAT_MESSAGE_OVERHEAD_TOKENS is what each chat message costs besides its text: its role and separators. */
export const CHAT_MESSAGE_OVERHEAD_TOKENS = 4;

const TOKEN = /[\p{L}\p{M}\p{N}]+|[^\s\p{L}\p{M}\p{N}]/gu;

/**
 * tokenize splits a text into its tokens by the rule above.
 * @param {string} text
 * @returns {string[]}
 */
export function tokenize(text) {
  return text.match(TOKEN) ?? [];
}

/**
 * countTokens counts a text's tokens without keeping them (prompts can be long).
 * @param {string} text
 * @returns {number}
 */
export function countTokens(text) {
  let count = 0;
  TOKEN.lastIndex = 0;
  while (TOKEN.exec(text) !== null) count += 1;
  return count;
}

/**
 * messageTexts lists the texts of a chat message that count: its content (a string, or the text of its
 * text parts), its name, and the name and arguments of each tool call it made.
 * @param {unknown} message
 * @returns {string[]}
 */
function messageTexts(message) {
  if (typeof message !== 'object' || message === null) return [];
  const { content, name, tool_calls: toolCalls } = /** @type {Record<string, unknown>} */ (message);
  const texts = [];
  if (typeof content === 'string') texts.push(content);
  else if (Array.isArray(content)) {
    for (const part of content) {
      if (typeof part === 'object' && part !== null && typeof part.text === 'string') texts.push(part.text);
    }
  }
  if (typeof name === 'string') texts.push(name);
  if (Array.isArray(toolCalls)) {
    for (const call of toolCalls) {
      const fn = typeof call === 'object' && call !== null ? call.function : undefined;
      if (typeof fn === 'object' && fn !== null) {
        if (typeof fn.name === 'string') texts.push(fn.name);
        if (typeof fn.arguments === 'string') texts.push(fn.arguments);
      }
    }
  }
  return texts;
}

/**
 * countMessageTokens counts one chat message: the overhead plus the tokens of its texts.
 * @param {unknown} message
 * @returns {number}
 */
export function countMessageTokens(message) {
  let count = CHAT_MESSAGE_OVERHEAD_TOKENS;
  for (const text of messageTexts(message)) count += countTokens(text);
  return count;
}

/**
 * countChatTokens counts a chat request's `messages`: the sum of its messages' counts.
 * @param {readonly unknown[]} messages
 * @returns {number}
 */
export function countChatTokens(messages) {
  let count = 0;
  for (const message of messages) count += countMessageTokens(message);
  return count;
}

/**
 * countPromptTokens counts a completion request's `prompt` or an embedding request's `input`: a string,
 * or the sum over an array of strings.
 * @param {string | readonly string[]} prompt
 * @returns {number}
 */
export function countPromptTokens(prompt) {
  if (typeof prompt === 'string') return countTokens(prompt);
  let count = 0;
  for (const text of prompt) count += countTokens(text);
  return count;
}
