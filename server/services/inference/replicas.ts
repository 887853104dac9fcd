// Where a tenant's models are served (issue #29): each running inference service of the tenant is a
// replica of the model it serves. A service's model server writes where it listens into its job's
// connection file (`.portal-session/connection.json`: {"host", "port", "model", "pid", "secret"}), as
// a session's launcher does; the job wrote it, so it is checked like a session's (services/sessions/
// connection.ts: no link on the way, one name, mode 0600, every field) and the host must be one of the
// nodes the scheduler gave the job — the gateway connects nowhere else.
import { and, asc, eq, inArray } from 'drizzle-orm';
import { z } from 'zod';
import { tenantSide, type Db } from '~/db/client';
import { jobs, organisations, projects, type Residency } from '~/db/schema';
import { configuredCatalogue } from '~/server/catalogue';
import { residencyAllowsSite } from '~/server/core/jobs/admission';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { logger } from '~/server/observability/log';
import { workspaceOf, type SiteRoots } from '~/server/services/files/workspace';
import { CONNECTION_FILE, NODE_NAME, readConnection, SECRET_PATTERN } from '~/server/services/sessions/connection';
import { actAsTenant } from '~/server/services/transaction';

/** A model server that answers: where, and the secret it wants as its bearer token. */
export interface Replica {
  jobId: string;
  siteId: string;
  model: string;
  address: string;
  port: number;
  secret: string;
}

/** A running service of the tenant, as the gateway lists it. */
export interface ServiceRow {
  jobId: string;
  siteId: string;
  projectId: string;
  resourceClassId: string;
  model: string;
  nodeList: string[] | null;
  startedAt: Date | null;
  /** A replica of one of the centre's shared models (a service of the centre's tenant), not the tenant's own. */
  shared?: boolean;
}

interface ModelConnection {
  host: string;
  port: number;
  model: string;
  secret: string;
}

const modelConnectionSchema = z.object({
  host: z.string().regex(NODE_NAME, 'must be a node name'),
  port: z.number().int('must be a whole number').min(1, 'must be 1 or more').max(65535, 'must be 65535 or less'),
  model: z.string().min(1, 'must name the model').max(200, 'must be at most 200 characters'),
  secret: z.string().regex(SECRET_PATTERN, 'must be 32 to 128 characters of A-Z, a-z, 0-9, _ and -'),
});

/** parseModelConnection checks the text of a service's connection file; a refusal names the field, never the value. */
export function parseModelConnection(text: string): { ok: true; connection: ModelConnection } | { ok: false; field: string; problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, field: CONNECTION_FILE, problem: 'is not JSON' };
  }
  const parsed = modelConnectionSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue?.path.length ? issue.path.join('.') : CONNECTION_FILE;
    return { ok: false, field, problem: issue?.path.length ? issue.message : 'must be an object with host, port, model and secret' };
  }
  return { ok: true, connection: { host: parsed.data.host, port: parsed.data.port, model: parsed.data.model, secret: parsed.data.secret } };
}

/** Where a project's calls may be served: the tenant's residency and the project's own, if it has one (the rules a job's site follows). */
export interface CallerResidency {
  tenant: Residency;
  project: Residency | null;
}

/**
 * servicesForCall reads, as the tenant, its running services of a model (or all) and the residency of the
 * project a token calls for (null: no such project of the tenant), in one transaction; and the running
 * replicas of the centre's shared models of that name (or all), which every tenant may call.
 */
export async function servicesForCall(db: Db, orgId: string, projectId: string, model?: string): Promise<{ services: ServiceRow[]; residency: CallerResidency | null }> {
  const sharedIds = configuredCatalogue().inference.sharedModels.map((m) => m.id);
  const wanted = model === undefined ? sharedIds : sharedIds.includes(model) ? [model] : [];
  const columns = { jobId: jobs.id, siteId: jobs.siteId, projectId: jobs.projectId, resourceClassId: jobs.resourceClassId, model: jobs.servedModel, nodeList: jobs.nodeList, startedAt: jobs.startedAt };
  // The centre's shared models: its tenant's running services of them, read on the portal's connection (every
  // tenant may call them), before the tenant's own transaction (PGlite has one connection).
  const shared =
    wanted.length === 0
      ? []
      : await db
        .select(columns)
        .from(jobs)
        .innerJoin(organisations, and(eq(organisations.id, jobs.orgId), eq(organisations.centre, true)))
        .where(and(eq(jobs.kind, 'inference'), eq(jobs.state, 'RUNNING'), inArray(jobs.servedModel, wanted)))
        .orderBy(asc(jobs.startedAt), asc(jobs.id));
  const own = await tenantSide(db).transaction(async (tx) => {
    const [, rows, [project]] = await Promise.all([
      actAsTenant(tx, orgId, 'read'),
      tx
        .select(columns)
        .from(jobs)
        .where(and(eq(jobs.orgId, orgId), eq(jobs.kind, 'inference'), eq(jobs.state, 'RUNNING'), ...(model === undefined ? [] : [eq(jobs.servedModel, model)])))
        .orderBy(asc(jobs.startedAt), asc(jobs.id)),
      tx
        .select({ tenant: organisations.residency, project: projects.dataResidency })
        .from(projects)
        .innerJoin(organisations, eq(organisations.id, projects.orgId))
        .where(and(eq(projects.id, projectId), eq(projects.orgId, orgId))),
    ]);
    return { services: rows.flatMap((r) => (r.model ? [{ ...r, model: r.model }] : [])), residency: project ?? null };
  });
  // A tenant's own service of a name comes first (the centre's own calls of its models are its own).
  const ownNames = new Set(own.services.map((s) => s.model));
  const sharedRows = shared.flatMap((r) => (r.model && !ownNames.has(r.model) ? [{ ...r, model: r.model, shared: true }] : []));
  return { services: [...own.services, ...sharedRows], residency: own.residency };
}

/** residencyAllows tells whether a call of a project with this residency may be served at a site. */
export function residencyAllows(residency: CallerResidency, site: { country: string; inEu: boolean }): boolean {
  return residencyAllowsSite(residency.tenant, site) && (residency.project === null || residencyAllowsSite(residency.project, site));
}

/** strictestResidency is the rule that binds a project's calls (for the refusal's words). */
export function strictestResidency(residency: CallerResidency): Residency {
  const rank: Record<Residency, number> = { any: 0, EU: 1, DE: 2 };
  return residency.project !== null && rank[residency.project] > rank[residency.tenant] ? residency.project : residency.tenant;
}

/**
 * replicaOf reads a running service's connection file and decides where to connect: null while its
 * server has not written one (starting) or when the file is not to be trusted (logged).
 */
export async function replicaOf(service: ServiceRow, deps: { roots: SiteRoots; scheduler: Pick<SchedulerPort, 'sessionAddress'> }): Promise<Replica | null> {
  const connection = await readConnection(workspaceOf(deps.roots, service.siteId, service.projectId), service.jobId, parseModelConnection);
  if (typeof connection === 'string') return null;
  if (connection.model !== service.model) {
    logger().warn({ component: 'inference', jobId: service.jobId }, "a service's connection file names another model than the service serves: not used");
    return null;
  }
  // The host comes from a file the job wrote: only a node the scheduler gave this job is connected to.
  if (!Array.isArray(service.nodeList) || !service.nodeList.includes(connection.host)) {
    logger().warn({ component: 'inference', jobId: service.jobId, host: connection.host, nodes: service.nodeList ?? [] }, "a service's connection file names a host that is not one of its job's nodes: not used");
    return null;
  }
  const address = (await deps.scheduler.sessionAddress?.(connection.host)) ?? connection.host;
  return { jobId: service.jobId, siteId: service.siteId, model: service.model, address, port: connection.port, secret: connection.secret };
}
