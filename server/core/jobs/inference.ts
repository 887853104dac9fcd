// What an inference service shows while it serves: its endpoint and the traffic it served. The
// simulated cluster has no real traffic, so the figures are derived, the same every time, from the
// job id and the cluster time it has run. Pure.
import { hashToUnit } from './estimates';

export interface InferenceTraffic {
  endpointUrl: string;
  requests: number;
  tokens: number;
}

/** The simulated services' domain: a reserved name (RFC 2606), never a real host. */
const ENDPOINT_DOMAIN = 'inference.ai-factory.example';

/** inferenceEndpointUrl returns a service's (simulated) OpenAI-style endpoint at its site. */
export function inferenceEndpointUrl(jobId: string, siteId: string): string {
  return `https://svc-${jobId.slice(0, 8)}.${siteId}.${ENDPOINT_DOMAIN}/v1`;
}

/**
 * inferenceTraffic returns a service's endpoint and the requests and tokens it served in `runSeconds`
 * of cluster time: 0.5–1.5 requests per second per GPU and 200–800 tokens per request, fixed per job.
 */
export function inferenceTraffic(input: { jobId: string; siteId: string; gpus: number; runSeconds: number }): InferenceTraffic {
  const rateMilliPerGpu = 500 + Math.floor(hashToUnit(input.jobId) * 1000);
  const tokensPerRequest = 200 + Math.floor(hashToUnit(`${input.jobId}/tokens`) * 600);
  const requests = Math.floor((Math.max(0, input.runSeconds) * input.gpus * rateMilliPerGpu) / 1000);
  return { endpointUrl: inferenceEndpointUrl(input.jobId, input.siteId), requests, tokens: requests * tokensPerRequest };
}
