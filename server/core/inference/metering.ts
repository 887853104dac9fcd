// Metering a model call in the ledger (issue #29). Pure; integers only.
//
// A call's price is per token, in millionths of its allocation's unit ("micro"): on a credit line
// (cents) the price in cents per million tokens is exactly the micro-cents per token; on a research
// allocation (GPU-seconds) it is converted at the allocation's class tariff, cents per GPU-hour.
//
// The ledger holds whole units, so each allocation keeps a meter of what calls cost it in micro
// (`allocations.inference_micro`); a call is charged the whole units it moves that meter past
// (chargeWithCarry). The ledger's charges for calls are therefore ⌊Σ usage × price⌋ — to the unit,
// whatever the calls' sizes — and a call costing a fraction of a cent is not rounded up to a cent.
//
// Before forwarding, a call reserves its worst case: every input token (counted by the model servers'
// rule) plus the most it may answer (`max_tokens`, else DEFAULT_COMPLETION_CAP) for each choice.

import { divRoundHalfUp } from '../usage/footprint';

export const MICRO = 1_000_000;

/** What an answer may hold when the request names no `max_tokens`: a production server's default is the rest of the context. */
export const DEFAULT_COMPLETION_CAP = 4096;

/** The most choices (`n`) the reservation believes; a server refuses more. */
const MAX_CHOICES = 128;

export type BudgetUnit = 'gpu_seconds' | 'cents';

export interface TokenPrice {
  inputCentsPerMTokens: number;
  outputCentsPerMTokens: number;
}

/** A call's price per token in millionths of its allocation's unit. */
export interface MicroPrice {
  inputMicroPerToken: number;
  outputMicroPerToken: number;
}

/**
 * microPrice converts a price per million tokens (cents) into the allocation's unit per token, in micro:
 * cents → the same figure; GPU-seconds → cents × 3600 ÷ the class's cents per GPU-hour, rounded half up
 * (free when the tariff is 0: nothing to convert at).
 */
export function microPrice(price: TokenPrice, unit: BudgetUnit, centsPerGpuHour: number | null): MicroPrice {
  if (unit === 'cents') return { inputMicroPerToken: price.inputCentsPerMTokens, outputMicroPerToken: price.outputCentsPerMTokens };
  if (!centsPerGpuHour || centsPerGpuHour <= 0) return { inputMicroPerToken: 0, outputMicroPerToken: 0 };
  return {
    inputMicroPerToken: divRoundHalfUp(price.inputCentsPerMTokens * 3600, centsPerGpuHour),
    outputMicroPerToken: divRoundHalfUp(price.outputCentsPerMTokens * 3600, centsPerGpuHour),
  };
}

/** callCostMicro is what a call's tokens cost, in micro of the unit. */
export function callCostMicro(price: MicroPrice, tokens: { prompt: number; completion: number }): number {
  return tokens.prompt * price.inputMicroPerToken + tokens.completion * price.outputMicroPerToken;
}

/** reservationFor is what a call whose worst case costs `worstMicro` reserves, in whole units: enough for any charge it can cause (0: free). */
export function reservationFor(worstMicro: number): number {
  return worstMicro <= 0 ? 0 : Math.ceil(worstMicro / MICRO);
}

/**
 * chargeWithCarry is the whole units a call costing `costMicro` is charged on an allocation whose meter
 * stood at `meterMicro`: the units the meter passes. Never more than reservationFor(costMicro).
 */
export function chargeWithCarry(meterMicro: number, costMicro: number): number {
  return Math.floor((meterMicro + costMicro) / MICRO) - Math.floor(meterMicro / MICRO);
}

/** How a request's text is counted: the model servers' rule (bin/portal-model-server/tokens.mjs). */
export interface TokenCounter {
  chat(messages: readonly unknown[]): number;
  prompt(prompt: string | readonly string[]): number;
}

export type Endpoint = 'chat' | 'completion' | 'embedding';

export const ENDPOINT_OF_PATH: Readonly<Record<string, Endpoint>> = { '/chat/completions': 'chat', '/completions': 'completion', '/embeddings': 'embedding' };

/** A bound the request names, read leniently: the model server refuses a malformed one itself. */
function positiveInt(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0 ? value : null;
}

/** texts reads a `prompt` or `input`: a string or an array of strings (token arrays count one a token). */
function textsOf(value: unknown): { texts: string[]; tokens: number; count: number } {
  if (typeof value === 'string') return { texts: [value], tokens: 0, count: 1 };
  if (!Array.isArray(value)) return { texts: [], tokens: 0, count: 1 };
  const texts: string[] = [];
  let tokens = 0;
  for (const item of value) {
    if (typeof item === 'string') texts.push(item);
    else if (typeof item === 'number') tokens += 1;
    else if (Array.isArray(item)) tokens += item.length;
  }
  return { texts, tokens, count: Math.max(1, value.length) };
}

/**
 * worstCaseTokens is the most a request may use: its input tokens and the most its answer may hold
 * (each choice up to `max_completion_tokens` / `max_tokens`, else DEFAULT_COMPLETION_CAP; an embedding answers none).
 */
export function worstCaseTokens(endpoint: Endpoint, body: Record<string, unknown>, count: TokenCounter): { prompt: number; completion: number } {
  const choices = Math.min(positiveInt(body.n) ?? 1, MAX_CHOICES);
  if (endpoint === 'embedding') {
    const input = textsOf(body.input);
    return { prompt: count.prompt(input.texts) + input.tokens, completion: 0 };
  }
  if (endpoint === 'chat') {
    const messages = Array.isArray(body.messages) ? body.messages : [];
    const cap = positiveInt(body.max_completion_tokens) ?? positiveInt(body.max_tokens) ?? DEFAULT_COMPLETION_CAP;
    return { prompt: count.chat(messages), completion: cap * choices };
  }
  // A completion answers each prompt of an array with `n` choices.
  const prompt = textsOf(body.prompt);
  const cap = positiveInt(body.max_tokens) ?? DEFAULT_COMPLETION_CAP;
  return { prompt: count.prompt(prompt.texts) + prompt.tokens, completion: cap * choices * prompt.count };
}

/** A site's figures a call's footprint needs. */
export interface CallSite {
  pueMilli: number;
  gridGco2PerKwh: number;
}

/**
 * callFootprint is a call's facility energy (µWh: tokens × IT energy a token × PUE) and its CO2e (µg:
 * facility kWh × grid g/kWh), each rounded half up once.
 */
export function callFootprint(tokens: number, uwhPerToken: number, site: CallSite | null): { energyUwh: number; co2eUg: number } {
  if (!site || tokens <= 0 || uwhPerToken <= 0) return { energyUwh: 0, co2eUg: 0 };
  const energyUwh = divRoundHalfUp(tokens * uwhPerToken * site.pueMilli, 1000);
  // µWh × g/kWh = 10⁻⁹ kWh × g/kWh = 10⁻⁹ g = 10⁻³ µg.
  return { energyUwh, co2eUg: divRoundHalfUp(energyUwh * site.gridGco2PerKwh, 1000) };
}
