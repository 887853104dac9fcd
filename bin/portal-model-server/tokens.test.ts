// The token rule the model server counts `usage` by and the portal's gateway counts input tokens by
// (issue #29): one table of texts and chats with their counts.
import { describe, expect, it } from 'vitest';
import { CHAT_MESSAGE_OVERHEAD_TOKENS, countChatTokens, countPromptTokens, countTokens, tokenize } from './tokens.mjs';

describe('the token rule', () => {
  it.each([
    ['', []],
    ['   \n\t', []],
    ['Hello, GPU centre!', ['Hello', ',', 'GPU', 'centre', '!']],
    ['H100 naïve  “quotes”\n€5', ['H100', 'naïve', '“', 'quotes', '”', '€', '5']],
    [' compute', ['compute']],
    ['a😀b', ['a', '😀', 'b']],
    ['x=1+2;', ['x', '=', '1', '+', '2', ';']],
  ])('tokenizes %j', (text, tokens) => {
    expect(tokenize(text)).toEqual(tokens);
    expect(countTokens(text)).toBe(tokens.length);
  });

  it.each([
    ['a text message', [{ role: 'user', content: 'two words' }], CHAT_MESSAGE_OVERHEAD_TOKENS + 2],
    ['text parts and a name', [{ role: 'user', content: [{ type: 'text', text: 'two words' }, { type: 'text', text: 'three more words' }], name: 'ada' }], 4 + 2 + 3 + 1],
    ['a tool call and its result', [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"site":"DE"}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'found' },
    ], 4 + 1 + 9 + (4 + 1)],
    ['an empty message', [{ role: 'user', content: '' }], 4],
  ])('counts a chat with %s', (_what, messages, tokens) => {
    expect(countChatTokens(messages)).toBe(tokens);
  });

  it('counts a prompt or input array as the sum of its strings', () => {
    expect(countPromptTokens('one two')).toBe(2);
    expect(countPromptTokens(['one two', 'three.'])).toBe(4);
  });
});
