// The wall in front of interactive sessions (issue #28): who may reach `/sessions/<job id>/…`. Only the
// person who started the session, signed in with a session that is still open, as a member of the
// tenant the job belongs to; everyone else — another member, another tenant, an unknown or malformed
// id — gets the same "not found", so the answer tells nothing about whose jobs exist. Then the job must
// be a running interactive session whose app said where it listens (connection.ts), on one of the
// nodes the scheduler gave the job: the proxy connects nowhere else (no open proxy: the host comes
// from a file the job writes).
import { and, eq } from 'drizzle-orm';
import { tenantSide, type Db } from '~/db/client';
import { portalSession } from '~/server/auth/session-cookie';
import { jobs } from '~/db/schema';
import { isFinalState, type SchedulerPort } from '~/server/core/scheduler/port';
import { logger } from '~/server/observability/log';
import type { Caller } from '~/server/services/actor';
import { jobDirOf, workspaceOf, type SiteRoots } from '~/server/services/files/workspace';
import { loadCaller } from '~/server/services/identity/accounts';
import { actAsTenant } from '~/server/services/transaction';
import { readConnection } from './connection';

/** A job id as the portal makes them (a UUID); anything else in the path is "not found". */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** What the wall decided for one request. */
export type SessionAccess =
  /** Through: connect to `address:port` and prove the proxy with `secret`. */
  | { kind: 'open'; jobId: string; userId: string; address: string; port: number; secret: string }
  /** No open portal session: sign in first. */
  | { kind: 'signIn' }
  /** Not the caller's session, or no such job: the one answer for every stranger. */
  | { kind: 'notFound' }
  /** The caller's session, not running yet or its app not ready (no usable connection.json). */
  | { kind: 'starting'; jobId: string }
  /** The caller's session, ended. */
  | { kind: 'ended'; jobId: string }
  /** The caller's session, but its connection file names a host that is not one of the job's nodes. */
  | { kind: 'refused'; jobId: string };

/** What the wall needs of the process: the portal's connection, next-auth's secret, the scheduler, the sites' roots. */
export interface SessionAccessDeps {
  db: Db;
  /** The secret next-auth signs and encrypts its session cookie with (server/auth/options.ts). */
  authSecret: string;
  /** Where a node's sessions are reached (SchedulerPort.sessionAddress; absent: the node's name). */
  scheduler: () => Promise<Pick<SchedulerPort, 'sessionAddress'>>;
  roots: SiteRoots;
}

/** isJobId tells whether a path segment is a job id as the portal writes them (lower-case UUID). */
export function isJobId(segment: string): boolean {
  return JOB_ID.test(segment);
}

/** The fields of a job the wall reads. */
interface SessionJob {
  id: string;
  kind: string;
  state: (typeof jobs.$inferSelect)['state'];
  siteId: string;
  projectId: string;
  nodeList: string[] | null;
}

/**
 * ownSessionJob finds the job among the caller's own jobs, tenant by tenant, each read as that tenant
 * (row-level security, the second wall: `actAsTenant`), the tenant the caller last chose first.
 */
async function ownSessionJob(db: Db, caller: Caller, jobId: string, preferredOrgId: string | undefined): Promise<SessionJob | undefined> {
  const tenants = [...caller.tenants].sort((a, b) => Number(b.id === preferredOrgId) - Number(a.id === preferredOrgId));
  for (const tenant of tenants) {
    const job = await tenantSide(db).transaction(async (tx) => {
      const [, rows] = await Promise.all([
        actAsTenant(tx, tenant.id, 'read'),
        tx
          .select({ id: jobs.id, kind: jobs.kind, state: jobs.state, siteId: jobs.siteId, projectId: jobs.projectId, nodeList: jobs.nodeList })
          .from(jobs)
          .where(and(eq(jobs.id, jobId), eq(jobs.orgId, tenant.id), eq(jobs.userId, caller.actor.userId)))
          .limit(1),
      ]);
      return rows[0];
    });
    if (job) return job;
  }
  return undefined;
}

/**
 * sessionAccess decides one request for `/sessions/<jobId>/…` from its cookies (a Map of name to
 * value): the session-row check is the tRPC context's own (`loadCaller` with the cookie's `sid`), so
 * signing out or being signed out by staff closes the sessions' doors on the next request too.
 */
export async function sessionAccess(deps: SessionAccessDeps, request: { jobId: string; cookies: ReadonlyMap<string, string>; preferredOrgId?: string }): Promise<SessionAccess> {
  const session = await portalSession(request.cookies, deps.authSecret);
  if (!session) return { kind: 'signIn' };
  const caller = await loadCaller(deps.db, session.userId, session.sessionId);
  if (!caller) return { kind: 'signIn' };
  if (!isJobId(request.jobId)) return { kind: 'notFound' };
  const job = await ownSessionJob(deps.db, caller, request.jobId, request.preferredOrgId);
  if (!job || job.kind !== 'interactive') return { kind: 'notFound' };
  if (job.state === 'SUBMITTING' || job.state === 'PENDING') return { kind: 'starting', jobId: job.id };
  if (job.state !== 'RUNNING') return { kind: isFinalState(job.state) ? 'ended' : 'starting', jobId: job.id };
  const connection = await readConnection(workspaceOf(deps.roots, job.siteId, job.projectId), job.id);
  if (typeof connection === 'string') return { kind: 'starting', jobId: job.id };
  // The host comes from a file the job wrote: only a node the scheduler gave this job is connected to.
  if (!Array.isArray(job.nodeList) || !job.nodeList.includes(connection.host)) {
    logger().warn(
      { component: 'sessions', jobId: job.id, host: connection.host, nodes: job.nodeList ?? [], dir: jobDirOf(workspaceOf(deps.roots, job.siteId, job.projectId), job.id) },
      "a session's connection.json names a host that is not one of its job's nodes: refused",
    );
    return { kind: 'refused', jobId: job.id };
  }
  const scheduler = await deps.scheduler();
  const address = (await scheduler.sessionAddress?.(connection.host)) ?? connection.host;
  return { kind: 'open', jobId: job.id, userId: caller.actor.userId, address, port: connection.port, secret: connection.secret };
}
