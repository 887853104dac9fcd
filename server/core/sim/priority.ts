/** Multifactor priority and the queue order. */
import type { PolicyConfig } from './types';

/** multifactorPriority is floor(ageWeight × min(age, maxAge) / maxAge + fairShareWeight × fairShare), an integer like Slurm's. */
export function multifactorPriority(ageSeconds: number, fairShare: number, policy: PolicyConfig): number {
  const age = policy.maxAgeSeconds > 0 ? Math.min(Math.max(ageSeconds, 0), policy.maxAgeSeconds) / policy.maxAgeSeconds : 0;
  return Math.floor(policy.ageWeight * age + policy.fairShareWeight * fairShare);
}

/** What the queue order looks at. */
export interface QueueKey {
  priority: number;
  submitTimeSeconds: number;
  seq: number;
}

/** compareQueue orders pending jobs: higher priority first (multifactor only), then earlier submit, then earlier submission. */
export function compareQueue(a: QueueKey, b: QueueKey, policy: PolicyConfig): number {
  if (policy.order === 'multifactor' && a.priority !== b.priority) return b.priority - a.priority;
  if (a.submitTimeSeconds !== b.submitTimeSeconds) return a.submitTimeSeconds - b.submitTimeSeconds;
  return a.seq - b.seq;
}
