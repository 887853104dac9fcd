// An inference service (issue #29): the model name it serves at the portal's gateway and where that
// answers. Its traffic is counted by the gateway (services/inference/metering.ts). Pure.

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

