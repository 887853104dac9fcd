import { describe, expect, it } from 'vitest';
import { defaultServedModel, SERVED_MODEL_PATTERN } from './inference';

describe('served model names', () => {
  it('takes a model name as callers give one: org/name, a tag, dots and dashes; not spaces, not a leading sign, not over 100', () => {
    for (const name of ['acme/support-7b', 'Llama-3.1-8B-Instruct', 'qwen2.5:7b', 'a', 'x'.repeat(100)]) expect(SERVED_MODEL_PATTERN.test(name), name).toBe(true);
    for (const name of ['', '-x', '/etc', 'a b', 'ünï', 'a?b', 'x'.repeat(101), '.hidden']) expect(SERVED_MODEL_PATTERN.test(name), name).toBe(false);
  });

  it('names a service without one after its job: lower case, other runs a dash, cut and trimmed, "model" if nothing is left', () => {
    expect(defaultServedModel('LLM endpoint')).toBe('llm-endpoint');
    expect(defaultServedModel('  Support bot (v2)! ')).toBe('support-bot-v2');
    expect(defaultServedModel('qwen2.5_chat')).toBe('qwen2.5_chat');
    expect(defaultServedModel('Dienst für Kunden')).toBe('dienst-f-r-kunden');
    expect(defaultServedModel('!!!')).toBe('model');
    expect(defaultServedModel(`${'a'.repeat(63)} tail`)).toBe('a'.repeat(63));
    for (const name of ['LLM endpoint', '!!!', `${'b'.repeat(70)}`, '-._x_.-']) expect(SERVED_MODEL_PATTERN.test(defaultServedModel(name)), name).toBe(true);
  });
});
