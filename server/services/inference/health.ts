// Active health checks of the model servers the gateway forwards to (issue #29). Every replica a route
// named in the last minute is probed every few seconds (`GET /health`: vLLM, llama.cpp's server, TGI
// and the portal's model server all answer it); a forward that could not reach one counts as a failed
// probe, an answered one as a good one. Routing tries healthy replicas first (the least busy of them),
// the others only after — a replica wrongly thought down is still used rather than a call refused.
import { logger } from '~/server/observability/log';
import type { Replica } from './replicas';

/** How often each replica is probed, how long a probe may take, and when a replica no route named is forgotten. */
export const HEALTH_INTERVAL_MS = 5000;
const PROBE_TIMEOUT_MS = 2000;
const FORGET_AFTER_MS = 60_000;

interface Known {
  replica: Replica;
  seenAt: number;
  healthy: boolean;
  checkedAt: number | null;
}

interface HealthState {
  known: Map<string, Known>;
  timer: ReturnType<typeof setInterval> | null;
  probing: Promise<void> | null;
  /** The round asked for while one was under way: it starts when that one ends (one waiting at most). */
  next: Promise<void> | null;
}

// One state per process, also when the module is loaded twice (Next.js's bundles).
const state: HealthState = ((globalThis as { __portalReplicaHealth?: HealthState }).__portalReplicaHealth ??= { known: new Map(), timer: null, probing: null, next: null });

/** watchReplicas keeps the replicas a route names under probing (a replica is probed from the first time a route names it). */
export function watchReplicas(replicas: readonly Replica[]): void {
  const now = performance.now();
  for (const replica of replicas) {
    const known = state.known.get(replica.jobId);
    if (known) {
      known.replica = replica;
      known.seenAt = now;
    } else state.known.set(replica.jobId, { replica, seenAt: now, healthy: true, checkedAt: null });
  }
  if (!state.timer && state.known.size > 0) {
    state.timer = setInterval(() => void probeReplicas(), HEALTH_INTERVAL_MS);
    state.timer.unref();
  }
}

/** isHealthy tells whether a replica answered its last probe or forward (one never probed counts as healthy). */
export function isHealthy(jobId: string): boolean {
  return state.known.get(jobId)?.healthy ?? true;
}

/** noteForward records what a forward found: reached (`true`) or not. */
export function noteForward(jobId: string, reached: boolean): void {
  const known = state.known.get(jobId);
  if (known) mark(known, reached, 'forward');
}

function mark(known: Known, healthy: boolean, by: 'probe' | 'forward'): void {
  known.checkedAt = performance.now();
  if (known.healthy === healthy) return;
  known.healthy = healthy;
  const fields = { component: 'gateway', jobId: known.replica.jobId, model: known.replica.model, site: known.replica.siteId, by };
  if (healthy) logger().info(fields, 'a model server answers again: calls go to it');
  else logger().warn(fields, 'a model server does not answer: calls go to the others first');
}

/**
 * probeReplicas probes every replica a route named in the last minute, at once; forgets the others. One
 * round at a time: asked while a round is under way (begun before what the caller wants to see, such as
 * a server that has just stopped answering), it answers with the round that starts when that one ends.
 */
export function probeReplicas(): Promise<void> {
  if (state.probing) {
    state.next ??= state.probing.then(() => {
      state.next = null;
      return probeReplicas();
    });
    return state.next;
  }
  state.probing = (async () => {
    const now = performance.now();
    const due = [...state.known.values()].filter((k) => {
      if (now - k.seenAt <= FORGET_AFTER_MS) return true;
      state.known.delete(k.replica.jobId);
      return false;
    });
    await Promise.all(due.map(async (k) => mark(k, await probe(k.replica), 'probe')));
    if (state.known.size === 0 && state.timer) {
      clearInterval(state.timer);
      state.timer = null;
    }
  })().finally(() => {
    state.probing = null;
  });
  return state.probing;
}

async function probe(replica: Replica): Promise<boolean> {
  const host = replica.address.includes(':') ? `[${replica.address}]` : replica.address;
  try {
    const response = await fetch(`http://${host}:${replica.port}/health`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: 'manual' });
    await response.body?.cancel();
    return response.ok;
  } catch {
    return false;
  }
}
