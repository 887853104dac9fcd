import { describe, expect, it } from 'vitest';
import { callCostMicro, callFootprint, chargeWithCarry, DEFAULT_COMPLETION_CAP, MICRO, microPrice, reservationFor, worstCaseTokens } from './metering';

// A stand-in for the model servers' rule (the gateway passes theirs): a word a token, 4 more a chat message.
const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
const countChatTokens = (messages: readonly unknown[]) => messages.reduce<number>((n, m) => n + 4 + words(String((m as { content: string }).content)), 0);
const counter = { chat: countChatTokens, prompt: (p: string | readonly string[]) => (typeof p === 'string' ? words(p) : p.reduce((n, t) => n + words(t), 0)) };

describe('metering a model call', () => {
  it('prices tokens in micro of the allocation’s unit: cents as they are, GPU-seconds at the class’s tariff', () => {
    expect(microPrice({ inputCentsPerMTokens: 250, outputCentsPerMTokens: 1000 }, 'cents', null)).toEqual({ inputMicroPerToken: 250, outputMicroPerToken: 1000 });
    // €1 per million at €1.80 per GPU-hour: 3600 / 180 × 100 = 2000 µGPU-s a token.
    expect(microPrice({ inputCentsPerMTokens: 100, outputCentsPerMTokens: 400 }, 'gpu_seconds', 180)).toEqual({ inputMicroPerToken: 2000, outputMicroPerToken: 8000 });
    expect(microPrice({ inputCentsPerMTokens: 100, outputCentsPerMTokens: 400 }, 'gpu_seconds', 0)).toEqual({ inputMicroPerToken: 0, outputMicroPerToken: 0 });
    expect(callCostMicro({ inputMicroPerToken: 250, outputMicroPerToken: 1000 }, { prompt: 12, completion: 30 })).toBe(33_000);
  });

  it('charges the whole units a call moves the meter past: Σ charges = ⌊Σ costs⌋, never more than the reservation', () => {
    let meter = 0;
    let charged = 0;
    let seed = 7;
    for (let i = 0; i < 10_000; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      const cost = seed % 3_000_000;
      const charge = chargeWithCarry(meter, cost);
      expect(charge).toBeLessThanOrEqual(reservationFor(cost));
      meter += cost;
      charged += charge;
      expect(charged).toBe(Math.floor(meter / MICRO));
    }
    expect(reservationFor(0)).toBe(0);
    expect(reservationFor(1)).toBe(1);
    expect(reservationFor(MICRO)).toBe(1);
    expect(reservationFor(MICRO + 1)).toBe(2);
  });

  it('takes a request’s worst case: its input by the servers’ rule and the most its answer may hold', () => {
    const messages = [{ role: 'user', content: 'What does a GPU-hour cost?' }];
    expect(worstCaseTokens('chat', { messages, max_tokens: 100 }, counter)).toEqual({ prompt: 4 + 5, completion: 100 });
    expect(worstCaseTokens('chat', { messages, max_completion_tokens: 50, max_tokens: 100 }, counter).completion).toBe(50);
    expect(worstCaseTokens('chat', { messages }, counter).completion).toBe(DEFAULT_COMPLETION_CAP);
    expect(worstCaseTokens('chat', { messages, max_tokens: 10, n: 3 }, counter).completion).toBe(30);
    // Text completions: each prompt of an array answers on its own.
    expect(worstCaseTokens('completion', { prompt: ['a b', 'c'], max_tokens: 5 }, counter)).toEqual({ prompt: 3, completion: 10 });
    expect(worstCaseTokens('completion', { prompt: [1, 2, 3], max_tokens: 5 }, counter)).toEqual({ prompt: 3, completion: 15 });
    expect(worstCaseTokens('embedding', { input: ['GPU hours', 'invoice'] }, counter)).toEqual({ prompt: 3, completion: 0 });
    // Malformed bounds are the server's to refuse: the reservation takes the default.
    expect(worstCaseTokens('chat', { messages, max_tokens: -1 }, counter).completion).toBe(DEFAULT_COMPLETION_CAP);
  });

  it('gives a call’s facility energy and CO2e from its tokens, the class’s energy per token and the site', () => {
    // 1,000 tokens × 80 µWh × PUE 1.08 = 86,400 µWh; × 380 g/kWh = 32,832 µg.
    expect(callFootprint(1000, 80, { pueMilli: 1080, gridGco2PerKwh: 380 })).toEqual({ energyUwh: 86_400, co2eUg: 32_832 });
    expect(callFootprint(1000, 0, { pueMilli: 1080, gridGco2PerKwh: 380 })).toEqual({ energyUwh: 0, co2eUg: 0 });
    expect(callFootprint(1000, 80, null)).toEqual({ energyUwh: 0, co2eUg: 0 });
  });
});
