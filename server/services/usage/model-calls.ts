// The usage page's model calls (issue #29): a tenant's calls through the OpenAI-compatible gateway in a
// period (inclusive UTC days, by when each call ended), per project and model — calls, tokens in and out,
// what the ledger charged them (euro cents on a credit line, GPU-seconds on a research allocation), and
// their facility energy and CO2e. The same rows (`model_calls`, settled) the month's invoice bills, so a
// month's euros here are the invoice's token lines. Managers see every project, PIs their own.
import { and, eq, gte, inArray, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '~/db/client';
import { modelCalls, organisations, projects } from '~/db/schema';
import { csvDocument } from '~/server/core/csv';
import type { TenantActor } from '~/server/services/actor';
import { reportScope } from './reports';

/** The sums each row of the reports is made of. */
const callSums = {
  calls: sql<number>`count(*)::int`,
  inputTokens: sql<string>`sum(${modelCalls.promptTokens})`,
  outputTokens: sql<string>`sum(${modelCalls.completionTokens})`,
  charged: sql<string>`sum(${modelCalls.chargedAmount})`,
  energyUwh: sql<string>`sum(${modelCalls.energyUwh})`,
  co2eUg: sql<string>`sum(${modelCalls.co2eUg})`,
};

/** numbersOf turns a row's sums (bigint sums arrive as text) into numbers. */
function numbersOf<R extends { inputTokens: string; outputTokens: string; charged: string; energyUwh: string; co2eUg: string }>(r: R) {
  return { ...r, inputTokens: Number(r.inputTokens), outputTokens: Number(r.outputTokens), charged: Number(r.charged), energyUwh: Number(r.energyUwh), co2eUg: Number(r.co2eUg) };
}

/** The calls of a period that count: settled, ended in [from, to] (inclusive UTC days). */
function endedIn(period: { from: string; to: string }) {
  return [eq(modelCalls.status, 'settled'), gte(modelCalls.endedAt, new Date(`${period.from}T00:00:00Z`)), lt(modelCalls.endedAt, new Date(Date.parse(`${period.to}T00:00:00Z`) + 86_400_000))];
}

/** What a row of calls sums: calls, tokens, the charge in its unit, facility energy (µWh) and CO2e (µg). */
interface CallFigures {
  unit: 'gpu_seconds' | 'cents';
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** What the ledger charged the calls, in the unit. */
  charged: number;
  energyUwh: number;
  co2eUg: number;
}

export interface ModelCallRow extends CallFigures {
  projectId: string;
  projectTitle: string;
  model: string;
}

export interface ModelCallReport {
  rows: ModelCallRow[];
  /** Per unit: the rows summed. */
  totals: CallFigures[];
}

/** modelCallReport sums a tenant's settled model calls that ended in the period, per project, model and unit. */
export async function modelCallReport(db: DbOrTx, orgId: string, scope: { all: true } | { all: false; projectIds: string[] }, period: { from: string; to: string }): Promise<ModelCallReport> {
  const raw = await db
    .select({
      projectId: modelCalls.projectId,
      projectTitle: projects.title,
      model: modelCalls.model,
      unit: modelCalls.unit,
      ...callSums,
    })
    .from(modelCalls)
    .innerJoin(projects, eq(projects.id, modelCalls.projectId))
    .where(
      and(
        eq(modelCalls.orgId, orgId),
        ...endedIn(period),
        ...(scope.all ? [] : [inArray(modelCalls.projectId, scope.projectIds.length ? scope.projectIds : ['00000000-0000-0000-0000-000000000000'])]),
      ),
    )
    .groupBy(modelCalls.projectId, projects.title, modelCalls.model, modelCalls.unit)
    .orderBy(projects.title, modelCalls.model);
  const rows: ModelCallRow[] = raw.map(numbersOf);
  return { rows, totals: totalsOf(rows) };
}

/** totalsOf sums rows per unit. */
function totalsOf(rows: readonly CallFigures[]): CallFigures[] {
  const totals = new Map<ModelCallRow['unit'], ModelCallReport['totals'][number]>();
  for (const r of rows) {
    const t = totals.get(r.unit) ?? { unit: r.unit, calls: 0, inputTokens: 0, outputTokens: 0, charged: 0, energyUwh: 0, co2eUg: 0 };
    t.calls += r.calls;
    t.inputTokens += r.inputTokens;
    t.outputTokens += r.outputTokens;
    t.charged += r.charged;
    t.energyUwh += r.energyUwh;
    t.co2eUg += r.co2eUg;
    totals.set(r.unit, t);
  }
  return [...totals.values()];
}

/** tenantModelCallReport is the report as the acting person may see it (reportScope). */
export async function tenantModelCallReport(db: DbOrTx, actor: TenantActor, period: { from: string; to: string }): Promise<ModelCallReport> {
  return modelCallReport(db, actor.org.id, await reportScope(db, actor), period);
}

/** The model-call CSV's columns, in order; documented in docs/CSV.md. */
export const MODEL_CALL_CSV_COLUMNS = ['project', 'model', 'calls', 'input_tokens', 'output_tokens', 'cost_eur', 'gpu_hours', 'energy_wh', 'co2e_g'] as const;

/** modelCallCsv renders the report: a line per project and model; cost in euros on a credit line, GPU-hours on a research allocation. */
export function modelCallCsv(report: ModelCallReport): string {
  return csvDocument(
    MODEL_CALL_CSV_COLUMNS,
    report.rows.map((r) => [
      r.projectTitle,
      r.model,
      String(r.calls),
      String(r.inputTokens),
      String(r.outputTokens),
      r.unit === 'cents' ? (r.charged / 100).toFixed(2) : null,
      r.unit === 'gpu_seconds' ? (r.charged / 3600).toFixed(4) : null,
      (r.energyUwh / 1_000_000).toFixed(3),
      (r.co2eUg / 1_000_000).toFixed(3),
    ]),
  );
}

export interface CentreModelCallRow extends CallFigures {
  orgId: string;
  name: string;
  kind: 'academic' | 'company';
  model: string;
}

/**
 * centreModelCalls is the centre's view (staff): every tenant's settled model calls that ended in the range
 * (inclusive UTC days), per tenant, model and unit, busiest first, and the totals per unit; `partition`
 * narrows to calls served on a resource class, `tenantKind` to one kind of tenant.
 */
export async function centreModelCalls(db: DbOrTx, input: { from: string; to: string; partition?: string; tenantKind?: 'academic' | 'company' }): Promise<{ rows: CentreModelCallRow[]; totals: ModelCallReport['totals'] }> {
  const raw = await db
    .select({
      orgId: modelCalls.orgId,
      name: organisations.name,
      kind: organisations.kind,
      model: modelCalls.model,
      unit: modelCalls.unit,
      ...callSums,
    })
    .from(modelCalls)
    .innerJoin(organisations, eq(organisations.id, modelCalls.orgId))
    .where(
      and(
        ...endedIn(input),
        ...(input.partition ? [eq(modelCalls.resourceClassId, input.partition)] : []),
        ...(input.tenantKind ? [eq(organisations.kind, input.tenantKind)] : []),
      ),
    )
    .groupBy(modelCalls.orgId, organisations.name, organisations.kind, modelCalls.model, modelCalls.unit)
    .orderBy(sql`sum(${modelCalls.promptTokens} + ${modelCalls.completionTokens}) desc`, organisations.name, modelCalls.model);
  const rows = raw.map(numbersOf);
  return { rows, totals: totalsOf(rows) };
}
