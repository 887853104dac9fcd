/**
 * The tRPC spine, in three sections:
 * 1. context — who calls (session), in which language, for which tenant, with which database;
 * 2. init — one error formatter that maps domain and validation errors to codes and field messages;
 * 3. procedures — public, authed, tenant(minRole) and staff(role): tenancy is resolved here and nowhere else.
 */
import { initTRPC, TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import superjson from 'superjson';
import type { OpenApiMeta } from 'trpc-to-openapi';
import type { Db } from '~/db/client';
import type { MemberRole, StaffRole } from '~/db/schema';
import { roleAtLeast } from '~/server/core/roles';
import type { SchedulerPort } from '~/server/core/scheduler/port';
import { configuredSiteRoots } from '~/server/services/files/roots';
import type { SiteRoots } from '~/server/services/files/workspace';
import { getScheduler } from '~/server/scheduler';
import type { FairGate } from './fair-gate';
import { mutateAsTenant, readAsTenant } from './tenant-transaction';
import type { PageTurn } from './page-turn';
import { AppError, DATABASE_RETRY_AFTER_SECONDS, ERROR_REASONS, isDatabaseUnavailable, isStatementTimeout, isTransientDbError } from '~/server/errors';
import { logger } from '~/server/observability/log';
import { metrics } from '~/server/observability/metrics';
import { DEFAULT_LOCALE, isMessageKey, translate, type Locale, type MessageKey, type MessageParams } from '~/server/i18n';
import { isStaff, type Actor, type Caller, type TenantActor } from '~/server/services/actor';
import { loadCaller } from '~/server/services/identity/accounts';
import { chooseTenant } from '~/server/services/tenants/organisations';
import type { RateRuleName } from '~/server/core/rate-limits';
import { scopeNeeded, type ApiTokenAuth, type TokenScope } from '~/server/core/rest/scopes';
import { recordAudit } from '~/server/services/audit';
import { limit } from '~/server/services/rate-limits';
import type { BudgetSyncStep } from '~/server/services/cluster/scheduler-budgets';

// 1. CONTEXT ------------------------------------------------------------------------------------

export interface Context {
  db: Db;
  /** The signed-in user's id from the session, or null. */
  userId: string | null;
  /** The session the cookie names (requests always have one; a test's caller may not). */
  sessionId?: string;
  locale: Locale;
  /** The tenant the caller chose to act for (organisation switcher), if any. */
  activeOrgId?: string;
  /** The clock; tests set it to travel in time. */
  now: () => Date;
  /** The scheduler adapter; unset = the process's configured one (server/scheduler.ts). Tests and benchmarks pass their own. */
  scheduler?: SchedulerPort;
  /** Where each site's workspaces lie; unset = the process's (server/services/files/roots.ts). Tests pass their own. */
  files?: SiteRoots;
  /** Fair sharing of the process between tenants (set for requests; unset in tests = no queueing). */
  gate?: FairGate;
  /**
   * Who is calling, looked up once per request and shared by its calls (a page makes several). Set
   * for requests only: a test's caller lives across changes to memberships and roles.
   */
  memo?: RequestMemo;
  /** The page's turn of the fair gate, when the caller is a page's (server/api/server-caller.ts). */
  turn?: PageTurn;
  /** Count requests against the rate limits (set for requests; tests and benchmarks call freely). */
  limits?: boolean;
  /** The caller's address as the reverse proxy reports it (server/core/rate-limits.ts `clientAddress`). */
  address?: string;
  /** The personal API token the call authenticated with (REST `/api/v1`); it fixes the user, the tenant and the scopes. */
  token?: ApiTokenAuth;
}

/**
 * What a procedure declares about itself: `openapi` exposes it at `/api/v1` (trpc-to-openapi), `scope`
 * is the token scope it needs (server/core/rest/scopes.ts `scopeNeeded`).
 */
export type PortalMeta = OpenApiMeta & { scope?: TokenScope };

/** rateLimit counts a request of `subject` against a named rule and refuses it with 429 beyond it. */
export async function rateLimit(ctx: Pick<Context, 'db' | 'limits' | 'now'>, name: RateRuleName, subject: string | undefined): Promise<void> {
  if (ctx.limits && subject) await limit(ctx.db, name, subject, ctx.now());
}

/** What one request has already looked up about its caller. */
export interface RequestMemo {
  /** The person and the tenants they belong to, in one statement (server/services/identity/accounts.ts loadCaller). */
  caller?: Promise<Caller | undefined>;
}

/** todayOf returns the context's current UTC date as YYYY-MM-DD. */
export function todayOf(ctx: Pick<Context, 'now'>): string {
  return ctx.now().toISOString().slice(0, 10);
}

/** rootsOf returns where the context's sites keep their workspaces. */
export function rootsOf(ctx: Pick<Context, 'files'>): SiteRoots {
  return ctx.files ?? configuredSiteRoots();
}

/** schedulerOf returns the context's scheduler adapter (the process's configured one unless a test or benchmark set its own). */
export function schedulerOf(ctx: Pick<Context, 'db' | 'scheduler'>): Promise<SchedulerPort> {
  return ctx.scheduler ? Promise.resolve(ctx.scheduler) : getScheduler(ctx.db);
}

/**
 * afterCommit is what a tenant mutation hands the services for the work that follows its commit (the
 * scheduler hand-over, server/services/transaction.ts `SchedulerStep`): it commits the request's transaction,
 * then gives back the portal's own connection and the scheduler adapter.
 */
export function afterCommit(ctx: Pick<Context, 'scheduler'> & { commit: () => Promise<Db> }) {
  return async () => {
    const db = await ctx.commit();
    return { db, scheduler: await schedulerOf({ db, scheduler: ctx.scheduler }) };
  };
}

/**
 * budgetSync is what a mutation hands the services so the scheduler's own budgets follow a change to
 * allocations once it is committed (server/services/cluster/scheduler-budgets.ts): a tenant mutation's commit
 * (afterCommit), or — for staff, whose services commit their own transactions — the portal's connection.
 */
export function budgetSync(ctx: Pick<Context, 'db' | 'scheduler' | 'now'> & { commit?: () => Promise<Db> }): BudgetSyncStep {
  const commit = ctx.commit;
  const step = commit ? afterCommit({ scheduler: ctx.scheduler, commit }) : async () => ({ db: ctx.db, scheduler: await schedulerOf(ctx) });
  return { step, now: ctx.now() };
}

/** createContextInner builds a context without a request: used by the request handler and by tests. */
export function createContextInner(input: Partial<Context> & { db: Db }): Context {
  return { userId: null, locale: DEFAULT_LOCALE, now: () => new Date(), ...input };
}

// 2. INIT ---------------------------------------------------------------------------------------

interface ValidationIssue {
  code?: string;
  path?: PropertyKey[] | readonly (PropertyKey | { key: PropertyKey })[];
  message?: string;
  minimum?: number | bigint;
  maximum?: number | bigint;
  origin?: string;
  format?: string;
  values?: unknown[];
  input?: unknown;
}

function issueMessage(locale: Locale, issue: ValidationIssue): string {
  const t = (key: MessageKey, params?: MessageParams) => translate(locale, key, params);
  if (issue.message && isMessageKey(issue.message)) return t(issue.message);
  switch (issue.code) {
    case 'invalid_type':
      return issue.input === undefined || issue.input === null ? t('validation.required') : t('validation.invalid');
    case 'too_small':
      if (issue.origin === 'string') {
        return Number(issue.minimum) <= 1 ? t('validation.required') : t('validation.tooShort', { min: Number(issue.minimum) });
      }
      return t('validation.tooSmall', { min: Number(issue.minimum) });
    case 'too_big':
      return issue.origin === 'string' ? t('validation.tooLong', { max: Number(issue.maximum) }) : t('validation.tooBig', { max: Number(issue.maximum) });
    case 'invalid_format':
      return issue.format === 'email' ? t('validation.email') : t('validation.invalid');
    case 'invalid_value':
      return t('validation.oneOf', { values: (issue.values ?? []).map(String).join(', ') });
    default:
      return t('validation.invalid');
  }
}

function issuePath(issue: ValidationIssue): string {
  return (issue.path ?? []).map((p) => (typeof p === 'object' && p !== null && 'key' in p ? String(p.key) : String(p))).join('.');
}

function validationIssues(cause: unknown): ValidationIssue[] | undefined {
  if (cause && typeof cause === 'object' && 'issues' in cause && Array.isArray(cause.issues)) {
    return (cause as { issues: ValidationIssue[] }).issues;
  }
  return undefined;
}

/** describeFieldErrors is the one-line message of an input's field errors ("gpus: Must be at most 8."). */
export function describeFieldErrors(fieldErrors: Record<string, string>): string {
  return Object.entries(fieldErrors)
    .map(([field, text]) => (field === '_' ? text : `${field}: ${text}`))
    .join(' ');
}

/** Deepest nesting an input may have; the portal's own inputs stay under 10. */
const MAX_INPUT_DEPTH = 32;

/** assertTree throws unless a value is a tree: no cycles, no deeper than MAX_INPUT_DEPTH. */
function assertTree(value: unknown, depth = 0, path: object[] = []): void {
  if (value === null || typeof value !== 'object') return;
  if (depth > MAX_INPUT_DEPTH || path.includes(value)) throw new Error('input is cyclic or too deep');
  path.push(value);
  const children = value instanceof Map ? [...value.keys(), ...value.values()] : value instanceof Set ? [...value] : Object.values(value);
  for (const child of children) assertTree(child, depth + 1, path);
  path.pop();
}

/**
 * superjson, except that an input it cannot read, or one it reads into a cycle (a crafted `meta` whose
 * referential equalities point into itself made validation recurse until "Maximum call stack size
 * exceeded"), is a clean 400 with a plain message.
 */
const transformer = {
  input: {
    serialize: (value: unknown) => superjson.serialize(value),
    deserialize: (value: unknown) => {
      try {
        const input = superjson.deserialize(value as Parameters<typeof superjson.deserialize>[0]);
        assertTree(input);
        return input;
      } catch (cause) {
        throw new TRPCError({ code: 'BAD_REQUEST', message: 'error.malformedRequest', cause });
      }
    },
  },
  output: superjson,
};

const t = initTRPC.context<Context>().meta<PortalMeta>().create({
  transformer,
  errorFormatter({ shape, error, ctx }) {
    const locale = ctx?.locale ?? DEFAULT_LOCALE;
    const cause = error.cause;
    let fieldErrors: Record<string, string> | undefined;
    let message = shape.message;
    const issues = error.code === 'BAD_REQUEST' ? validationIssues(cause) : undefined;
    if (issues) {
      fieldErrors = {};
      for (const issue of issues) fieldErrors[issuePath(issue) || '_'] ??= issueMessage(locale, issue);
      message = describeFieldErrors(fieldErrors);
    } else if (cause instanceof AppError) {
      message = translate(locale, cause.key, cause.params);
      if (cause.field) fieldErrors = { [cause.field]: message };
    } else if (error.code === 'INTERNAL_SERVER_ERROR') {
      message = translate(locale, 'common.unexpectedError');
    } else if (isMessageKey(shape.message)) {
      message = translate(locale, shape.message);
    }
    return {
      ...shape,
      message,
      data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, fieldErrors, reason: cause instanceof AppError ? ERROR_REASONS[cause.key] : undefined },
    };
  },
});

export const createCallerFactory = t.createCallerFactory;
export const router = t.router;

// 3. PROCEDURES ---------------------------------------------------------------------------------

/** Domain errors become tRPC errors with the matching code; everything else stays a 500 (and is logged). */
const errorMapping = t.middleware(async ({ ctx, next, path }) => {
  const result = await next();
  if (!result.ok) {
    const cause = result.error.cause;
    if (cause instanceof AppError) {
      throw new TRPCError({ code: cause.code, message: translate(ctx.locale, cause.key, cause.params), cause });
    }
    // Contention that outlasted the service's retries (or a statement timeout): busy, not broken.
    if (isTransientDbError(cause) || isStatementTimeout(cause)) {
      logger().warn({ err: cause, procedure: path }, 'database busy');
      const busy = new AppError('SERVICE_UNAVAILABLE', 'error.busy');
      throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: translate(ctx.locale, busy.key), cause: busy });
    }
    // The database lost or out of reach (a fail-over): unavailable for a moment, not broken.
    if (isDatabaseUnavailable(cause)) {
      logger().warn({ err: cause, procedure: path }, 'database unavailable');
      const unavailable = new AppError('SERVICE_UNAVAILABLE', 'error.databaseUnavailable', { seconds: DATABASE_RETRY_AFTER_SECONDS });
      throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: translate(ctx.locale, unavailable.key, unavailable.params), cause: unavailable });
    }
    if (result.error.code === 'INTERNAL_SERVER_ERROR') logger().error({ err: result.error.cause ?? result.error, procedure: path }, 'procedure failed');
  }
  return result;
});

/** A page's calls keep its fair-gate turn while they run (server/api/page-turn.ts). */
const pageTurn = t.middleware(async ({ ctx, next }) => {
  if (!ctx.turn) return next();
  ctx.turn.begin();
  try {
    return await next();
  } finally {
    ctx.turn.end();
  }
});

/** Every call's duration and outcome, per procedure, for /api/metrics (the outcome as errorMapping left it). */
const callMetrics = t.middleware(async ({ next, path, type }) => {
  const stop = metrics().procedureDuration.startTimer({ procedure: path, type });
  const result = await next();
  stop({ status: String(result.ok ? 200 : getHTTPStatusCodeFromError(result.error)) });
  return result;
});

export const publicProcedure = t.procedure.use(callMetrics).use(errorMapping).use(pageTurn);

/** The signed-in person (session or API token), loaded once per request; the builders below add their checks. */
const signedInProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const userId = ctx.userId;
  const load = (id: string) => loadCaller(ctx.db, id, ctx.sessionId);
  const caller = userId ? await (ctx.memo ? (ctx.memo.caller ??= load(userId)) : load(userId)) : undefined;
  if (!caller) throw new AppError('UNAUTHORIZED', 'error.unauthorized');
  const actor: Actor = caller.actor;
  return next({ ctx: { ...ctx, actor, tenants: caller.tenants, emailVerified: caller.emailVerified, timeZone: caller.timeZone } });
});

/**
 * A call made with a personal API token needs the scope its procedure asks for (server/core/rest/scopes.ts
 * `scopeNeeded`): reads `read` (staff reads `staff:read`), a mutation the scope it declares — one that
 * declares none (changing a password, making another token) is never open to a token.
 */
function tokenScope(kind: 'tenant' | 'staff' | 'account') {
  return t.middleware(({ ctx, meta, type, next }) => {
    if (!ctx.token) return next();
    const needed = scopeNeeded(kind, type, meta?.scope);
    if (!needed) throw new AppError('FORBIDDEN', 'apiToken.notForTokens');
    if (!ctx.token.scopes.includes(needed)) throw new AppError('FORBIDDEN', 'apiToken.scopeMissing', { scope: needed });
    return next();
  });
}

export const authedProcedure = signedInProcedure.use(tokenScope('account'));

/** A tenant read has no transaction of its own to end. */
const readsDoNotCommit = (): Promise<Db> => Promise.reject(new Error('commit() ends a tenant mutation’s transaction; a read has none'));

/**
 * tenantProcedure resolves the tenant the caller acts for and requires a minimum role; suspended
 * tenants, and people who have not yet confirmed their e-mail address, may read but not act.
 * `rateLimit` counts the call against a rule per person first.
 */
export function tenantProcedure(minRole: MemberRole = 'member', options: { rateLimit?: RateRuleName } = {}) {
  return signedInProcedure.use(tokenScope('tenant')).use(async ({ ctx, next, type, path }) => {
    // A token acts for its own tenant and no other: the cookie is not read, and a token whose person
    // left that tenant acts for none.
    const resolved = chooseTenant(ctx.tenants, ctx.token ? (ctx.token.orgId ?? undefined) : ctx.activeOrgId);
    if (!resolved.org || (ctx.token && resolved.org.id !== ctx.token.orgId)) throw new AppError('FORBIDDEN', 'error.notMember');
    const tenant: TenantActor = { ...ctx.actor, org: resolved.org, role: resolved.role };
    if (!roleAtLeast(tenant.role, minRole)) {
      throw new AppError('FORBIDDEN', 'error.roleTooLow', { role: translate(ctx.locale, `role.${minRole}`), org: tenant.org.name });
    }
    if (type === 'mutation' && tenant.org.status === 'suspended') {
      throw new AppError('FORBIDDEN', 'error.tenantSuspended', { org: tenant.org.name });
    }
    // An address nobody proved to receive mail could be anyone's: a sign-up with it may look around but
    // spends nothing and invites nobody until the link mailed to it is opened
    // (server/services/identity/email-verification.ts).
    if (type === 'mutation' && !ctx.emailVerified) {
      throw new AppError('PRECONDITION_FAILED', 'error.emailUnverified', { email: tenant.email });
    }
    if (options.rateLimit) await rateLimit(ctx, options.rateLimit, tenant.userId);
    // Reads and writes run as the role portal_tenant with the tenant's id set (the transaction:
    // server/api/tenant-transaction.ts; the settings: actAsTenant in server/services/transaction.ts),
    // so Postgres row-level security (drizzle/0009, 0018) keeps every other tenant's rows out of reach
    // even of a query that forgot its tenant filter. A mutation's transaction is the request's: the
    // services join it, and it commits when the call succeeds or when it calls `ctx.commit()`.
    const token = ctx.token;
    const call = () =>
      type === 'query'
        ? readAsTenant(ctx.db, tenant.org.id, (db) => next({ ctx: { ...ctx, tenant, db, commit: readsDoNotCommit } }))
        : mutateAsTenant(ctx.db, tenant.org.id, async (db, commit) => {
            // What a token changes is audited under its name, in the change's own transaction (rolled
            // back with it when the change fails).
            if (token) await recordAudit(db, { actorUserId: tenant.userId, orgId: tenant.org.id, action: 'api.call', targetType: 'procedure', targetId: path, data: { apiToken: token.name, apiTokenId: token.id } });
            return next({ ctx: { ...ctx, tenant, db, commit } });
          });
    // The tenant's turn first (server/api/fair-gate.ts), so one tenant's burst cannot slow the others.
    return ctx.gate ? ctx.gate.run(tenant.org.id, call) : call();
  });
}

/** staffProcedure requires a centre staff role (any, or the one given). */
export function staffProcedure(role?: StaffRole) {
  return signedInProcedure.use(tokenScope('staff')).use(({ ctx, next }) => {
    if (!isStaff(ctx.actor, role)) {
      throw new AppError('FORBIDDEN', role === 'admin' ? 'error.adminOnly' : 'error.staffOnly');
    }
    return next({ ctx });
  });
}
