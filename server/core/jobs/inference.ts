// An inference service (issue #29): the model name it serves at the portal's gateway, and the traffic
// it shows while it serves. Until the gateway meters requests, the figures are derived, the same every
// time, from the job id and the cluster time it has run. Pure.
import { hashToUnit } from './estimates';

/**
 * A served model's name, as callers name it at the gateway (`"model": "acme/support-7b"`): letters,
 * digits and `. _ - / :` (Hugging Face's `org/name`, a `:tag`), starting with a letter or digit, at most 100.
 */
export const SERVED_MODEL_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/:-]{0,99}$/;

/**
 * defaultServedModel is the model name of a service submitted without one: its job name in lower case,
 * every run of other characters a `-`, cut to 64 and trimmed of `- . _` at either end ("model" if nothing
 * is left). drizzle/0055 gave the services from before the same names in SQL.
 */
export function defaultServedModel(jobName: string): string {
  const slug = jobName
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .slice(0, 64)
    .replace(/^[-._]+|[-._]+$/g, '');
  return slug || 'model';
}

/** Where the portal's OpenAI-compatible gateway answers, below the portal's address (the `baseURL` of an OpenAI client). */
export const GATEWAY_PATH = '/api/v1/openai/v1';

export interface InferenceTraffic {
  requests: number;
  tokens: number;
}

/**
 * inferenceTraffic returns the requests and tokens a service served in `runSeconds` of cluster time:
 * 0.5–1.5 requests per second per GPU and 200–800 tokens per request, fixed per job.
 */
export function inferenceTraffic(input: { jobId: string; gpus: number; runSeconds: number }): InferenceTraffic {
  const rateMilliPerGpu = 500 + Math.floor(hashToUnit(input.jobId) * 1000);
  const tokensPerRequest = 200 + Math.floor(hashToUnit(`${input.jobId}/tokens`) * 600);
  const requests = Math.floor((Math.max(0, input.runSeconds) * input.gpus * rateMilliPerGpu) / 1000);
  return { requests, tokens: requests * tokensPerRequest };
}
