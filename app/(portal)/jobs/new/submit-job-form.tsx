'use client';
// The job form: where, how big, how long, what to run — with the reservation, cost and energy shown
// before submitting, a warning when the reservation does not fit what is left (and what would) or the
// job is too large for its site's power cap, and a fine-tuning template that estimates the runtime
// from model and data size. The values are kept as a draft of this visit (sessionStorage, its id in
// the URL), so Back after a submit finds them.
import { useMutation, useQuery } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useEffect, useMemo, useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card, cx } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formatAmount, formatDuration, formatEuros, formatGpuHours, formatKwh, formatScientific } from '~/server/i18n/format';
import { useTRPC } from '~/app/_lib/trpc';
import type { RouterOutputs } from '~/app/_lib/types';
import { residencyAllowsSite } from '~/server/core/jobs/admission';
import { LowCarbonStart } from './low-carbon-start';
import { RunAfter, type Dependency } from './run-after';
import { NO_SWEEP, SweepFields, sweepRequest, type Sweep } from './sweep';
import { InputsPicker } from './inputs-picker';

type Targets = RouterOutputs['job']['targets'];
type Kind = 'training' | 'fine_tuning' | 'inference' | 'batch';
type Shortfall = RouterOutputs['job']['estimate']['shortfalls'][number];

/** What each limit a reservation can break is called in the warning (the company's budgets: issue #24). */
const FIT_KEYS = {
  budget: 'jobs.fit.budget',
  monthlyCap: 'jobs.fit.monthlyCap',
  projectMonthly: 'jobs.fit.projectMonthly',
  projectTotal: 'jobs.fit.projectTotal',
  personMonthly: 'jobs.fit.personMonthly',
} as const satisfies Record<Exclude<Shortfall['limit'], 'gpusAtOnce'>, string>;

/** What is left of each company budget, under the estimate's figures. */
const LEFT_KEYS = { projectMonthly: 'jobs.leftProjectMonthly', projectTotal: 'jobs.leftProjectTotal', personMonthly: 'jobs.leftPersonMonthly' } as const;

/** The form's values as typed: what a draft keeps and a clone prefills. */
export interface JobDraft {
  template: 'custom' | 'fine-tune';
  allocationId: string;
  resourceClassId: string;
  kind: Kind;
  name: string;
  gpus: string;
  nodes: string;
  walltimeHours: string;
  image: string;
  command: string;
  envText: string;
  /** An inference service's model name at the gateway (empty: named after the job). */
  servedModel?: string;
  params: string;
  tokens: string;
  utilisation: string;
  /** One job or a sweep (a job array). */
  sweep: Sweep;
}

const DRAFT_PREFIX = 'job-form-draft:';
const DRAFT_ID = /^[0-9a-f-]{36}$/;

function readDraft(id: string): Partial<JobDraft> | null {
  try {
    const text = window.sessionStorage.getItem(DRAFT_PREFIX + id);
    return text ? (JSON.parse(text) as Partial<JobDraft>) : null;
  } catch {
    return null;
  }
}

const SHOWN = ['allocationId', 'resourceClassId', 'name', 'kind', 'gpus', 'nodes', 'walltimeMinutes', 'image', 'command', 'env', 'dependency.jobIds', 'array', 'inputs', 'servedModel'];

function parseEnv(text: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith('#')) continue;
    const eq = trimmed.indexOf('=');
    if (eq > 0) env[trimmed.slice(0, eq).trim()] = trimmed.slice(eq + 1).trim();
    else env[trimmed] = '';
  }
  return env;
}

export function SubmitJobForm({
  targets,
  initialTemplate,
  initialAllocationId,
  companyTenant,
  clone,
}: {
  targets: Targets;
  initialTemplate: 'custom' | 'fine-tune';
  initialAllocationId?: string;
  companyTenant: boolean;
  /** A finished job's spec to submit again, and its name. */
  clone?: { name: string; draft: Partial<JobDraft> };
}) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const start = clone?.draft ?? {};
  const startTemplate = start.template ?? initialTemplate;
  const firstAllocation = targets.allocations.find((a) => a.id === (start.allocationId ?? initialAllocationId)) ?? targets.allocations[0]!;
  const [template, setTemplate] = useState(startTemplate);
  const [allocationId, setAllocationId] = useState(firstAllocation.id);
  const allocation = targets.allocations.find((a) => a.id === allocationId) ?? targets.allocations[0]!;
  // The allocation's class if it names one, and only sites its project's data-residency need allows.
  const classesForAllocation = targets.resourceClasses.filter(
    (c) => (allocation.resourceClassId === null || c.id === allocation.resourceClassId) && (!allocation.projectResidency || residencyAllowsSite(allocation.projectResidency, c)),
  );
  const [resourceClassId, setResourceClassId] = useState(classesForAllocation.find((c) => c.id === start.resourceClassId)?.id ?? classesForAllocation[0]?.id ?? '');
  const rc = targets.resourceClasses.find((c) => c.id === resourceClassId);
  const [kind, setKind] = useState<Kind>(start.kind ?? (startTemplate === 'fine-tune' ? 'fine_tuning' : 'training'));
  const [name, setName] = useState(start.name ?? (startTemplate === 'fine-tune' ? 'fine-tune' : ''));
  const [gpus, setGpus] = useState(start.gpus ?? '8');
  const [nodes, setNodes] = useState(start.nodes ?? '1');
  const [walltimeHours, setWalltimeHours] = useState(start.walltimeHours ?? '2');
  const [image, setImage] = useState(start.image ?? 'nvcr.io/nvidia/pytorch:24.05-py3');
  const [command, setCommand] = useState(start.command ?? (startTemplate === 'fine-tune' ? 'python finetune.py --model-size 7B --tokens 0.5B' : 'torchrun --nproc_per_node=8 train.py --config config.yaml'));
  const [envText, setEnvText] = useState(start.envText ?? '');
  const [servedModel, setServedModel] = useState(start.servedModel ?? '');
  const [params, setParams] = useState(start.params ?? '7');
  const [tokens, setTokens] = useState(start.tokens ?? '0.5');
  const [utilisation, setUtilisation] = useState(start.utilisation ?? '40');
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [idempotencyKey] = useState(() => crypto.randomUUID());
  const [draftId, setDraftId] = useState<string | null>(null);
  const submit = useMutation(trpc.job.submit.mutationOptions());
  // The low-carbon start the submitter chose (null: as soon as possible).
  const [begin, setBegin] = useState<Date | null>(null);
  // Another job of the project this one starts after (null: as soon as it can).
  const [dependency, setDependency] = useState<Dependency>(null);
  // Inputs picked from the project's workspace at the class's site (a new project or site starts with none).
  const [inputsPicked, setInputsPicked] = useState<{ at: string; paths: string[] }>({ at: '', paths: [] });
  const inputsAt = `${allocation.projectId}:${rc?.siteId ?? ''}`;
  const inputs = inputsPicked.at === inputsAt ? inputsPicked.paths : [];
  // One job, or a sweep: a job array over task indexes or over a list of values.
  const [sweep, setSweep] = useState<Sweep>(start.sweep ?? NO_SWEEP);
  const swept = sweepRequest(kind === 'inference' ? NO_SWEEP : sweep, command);

  // This visit's draft: Back to this page's history entry (its URL names the draft) restores it; a
  // new visit of the form starts afresh. Kept in this tab's sessionStorage, never in the URL itself.
  useEffect(() => {
    const url = new URL(window.location.href);
    const known = url.searchParams.get('draft');
    const stored = known && DRAFT_ID.test(known) ? readDraft(known) : null;
    if (known && stored) {
      const valid = <T,>(value: T | undefined, current: T) => (value === undefined ? current : value);
      const storedAllocation = targets.allocations.find((a) => a.id === stored.allocationId);
      if (stored.template) setTemplate(stored.template);
      if (storedAllocation) setAllocationId(storedAllocation.id);
      if (stored.resourceClassId && targets.resourceClasses.some((c) => c.id === stored.resourceClassId)) setResourceClassId(stored.resourceClassId);
      if (stored.kind) setKind(stored.kind);
      setName((v) => valid(stored.name, v));
      setGpus((v) => valid(stored.gpus, v));
      setNodes((v) => valid(stored.nodes, v));
      setWalltimeHours((v) => valid(stored.walltimeHours, v));
      setImage((v) => valid(stored.image, v));
      setCommand((v) => valid(stored.command, v));
      setEnvText((v) => valid(stored.envText, v));
      setServedModel((v) => valid(stored.servedModel, v));
      setParams((v) => valid(stored.params, v));
      setTokens((v) => valid(stored.tokens, v));
      setUtilisation((v) => valid(stored.utilisation, v));
      setSweep((v) => valid(stored.sweep, v));
      setDraftId(known);
      return;
    }
    const id = crypto.randomUUID();
    url.searchParams.set('draft', id);
    window.history.replaceState(window.history.state, '', url);
    setDraftId(id);
  }, [targets]);

  useEffect(() => {
    if (!draftId) return;
    const draft: JobDraft = { template, allocationId, resourceClassId, kind, name, gpus, nodes, walltimeHours, image, command, envText, servedModel, params, tokens, utilisation, sweep };
    try {
      window.sessionStorage.setItem(DRAFT_PREFIX + draftId, JSON.stringify(draft));
    } catch {
      // Storage full or refused: the form still works, Back just starts afresh.
    }
  }, [draftId, template, allocationId, resourceClassId, kind, name, gpus, nodes, walltimeHours, image, command, envText, servedModel, params, tokens, utilisation, sweep]);

  const gpuCount = Math.max(0, Math.floor(Number(gpus) || 0));
  const nodeCount = Math.max(0, Math.floor(Number(nodes) || 0));
  const fineTune = useQuery({
    ...trpc.job.fineTuneEstimate.queryOptions({ resourceClassId, paramsBillions: Number(params) || 0.001, tokensBillions: Number(tokens) || 0.001, gpus: gpuCount || 1, utilisationPercent: Math.min(90, Math.max(5, Math.round(Number(utilisation) || 40))) }),
    enabled: template === 'fine-tune' && Boolean(rc) && Number(params) > 0 && Number(tokens) > 0 && gpuCount > 0,
  });
  const walltimeMinutes = template === 'fine-tune' && fineTune.data ? fineTune.data.walltimeSeconds / 60 : Math.round((Number(walltimeHours) || 0) * 60);
  const runtimeSeconds = template === 'fine-tune' ? fineTune.data?.runtimeSeconds : undefined;
  const estimate = useQuery({
    ...trpc.job.estimate.queryOptions({ allocationId, resourceClassId, gpus: gpuCount || 1, nodes: nodeCount || 1, walltimeMinutes: Math.max(1, walltimeMinutes), runtimeSeconds, ...(swept.array ? { array: swept.array } : {}) }),
    enabled: Boolean(resourceClassId) && gpuCount > 0 && nodeCount > 0 && walltimeMinutes > 0,
    retry: false,
    placeholderData: (previous) => previous,
  });

  const envVars = useMemo(() => parseEnv(envText), [envText]);

  /** What one broken limit means, in the reader's words, with what would fit. */
  function shortfallText(shortfall: Shortfall): string {
    if (shortfall.limit === 'gpusAtOnce') {
      return shortfall.maxGpus > 0
        ? t('jobs.fit.gpusAtOnce', { limit: shortfall.limitGpus, inUse: shortfall.inUseGpus, max: shortfall.maxGpus })
        : t('jobs.fit.gpusAtOnceFull', { limit: shortfall.limitGpus });
    }
    const left = formatAmount(locale, shortfall.unit, shortfall.left);
    const what = t(FIT_KEYS[shortfall.limit], { needed: formatAmount(locale, shortfall.unit, shortfall.needed), left });
    const fits = shortfall.maxWalltimeSeconds > 0 ? t('jobs.fit.walltimeFits', { walltime: formatDuration(shortfall.maxWalltimeSeconds), gpus: shortfall.gpus, left }) : t('jobs.fit.nothingFits');
    return `${what} ${fits}`;
  }
  // The limit that binds first: GPUs at once, then the smallest amount left.
  const shortfalls = [...(estimate.data?.shortfalls ?? [])].sort((a, b) => (a.limit === 'gpusAtOnce' ? -1 : b.limit === 'gpusAtOnce' ? 1 : a.left - b.left));

  async function onSubmit(event: React.FormEvent) {
    event.preventDefault();
    setErrors({ fields: {} });
    try {
      const job = await submit.mutateAsync({
        allocationId,
        resourceClassId,
        name: name || (template === 'fine-tune' ? `fine-tune ${params}B` : 'job'),
        kind,
        gpus: Number(gpus),
        nodes: Number(nodes),
        walltimeMinutes,
        image,
        command: template === 'fine-tune' && !command.includes('finetune') ? `python finetune.py --model-size ${params}B --tokens ${tokens}B` : swept.command,
        ...(swept.array !== undefined ? { array: swept.array } : {}),
        ...(inputs.length ? { inputs } : {}),
        env: envVars,
        idempotencyKey,
        ...(begin && kind !== 'inference' ? { begin: begin.toISOString() } : {}),
        ...(kind === 'inference' && servedModel.trim() ? { servedModel: servedModel.trim() } : {}),
        ...(dependency ? { dependency } : {}),
        estimate:
          template === 'fine-tune' && fineTune.data
            ? { runtimeSeconds: fineTune.data.runtimeSeconds, template: 'fine-tune', assumptions: { paramsBillions: Number(params), tokensBillions: Number(tokens), peakTflops: fineTune.data.peakTflops, utilisationPercent: fineTune.data.utilisationPercent } }
            : undefined,
      });
      router.push(`/jobs/${job.id}`);
    } catch (error) {
      setErrors(formErrors(error, SHOWN));
    }
  }

  const fe = errors.fields;
  return (
    <form onSubmit={onSubmit} className="grid gap-6 lg:grid-cols-[1fr_22rem]" noValidate>
      <div className="min-w-0 space-y-6">
        {clone && <Alert tone="info">{t('jobs.cloneNote', { name: clone.name })}</Alert>}
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        <Card title={t('jobs.template')}>
          <div className="flex flex-wrap gap-2" role="radiogroup" aria-label={t('jobs.template')}>
            {(['custom', 'fine-tune'] as const).map((tpl) => (
              <label key={tpl} className={cx('cursor-pointer rounded-md px-3 py-2 text-sm ring-1', template === tpl ? 'bg-indigo-50 ring-2 ring-indigo-600' : 'ring-slate-300')}>
                <input
                  type="radio"
                  name="template"
                  className="mr-2"
                  checked={template === tpl}
                  onChange={() => {
                    setTemplate(tpl);
                    if (tpl === 'fine-tune') {
                      setKind('fine_tuning');
                      setCommand(`python finetune.py --model-size ${params}B --tokens ${tokens}B`);
                    }
                  }}
                />
                {t(tpl === 'custom' ? 'jobs.templateCustom' : 'jobs.templateFineTune')}
              </label>
            ))}
          </div>
          {companyTenant && template === 'custom' && <p className="mt-2 text-xs text-slate-500">{t('jobs.templateHint')}</p>}
        </Card>

        <Card title={t('jobs.where')}>
          <div className="grid gap-4 md:grid-cols-2">
            <Field label={t('jobs.allocation')} error={fe.allocationId}>
              <select
                value={allocationId}
                onChange={(e) => {
                  setAllocationId(e.target.value);
                  const next = targets.allocations.find((a) => a.id === e.target.value)!;
                  if (next.resourceClassId) setResourceClassId(next.resourceClassId);
                }}
              >
                {targets.allocations.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.projectTitle} — {a.unit === 'cents' ? t('allocation.creditLine') : a.resourceClassId} ({t('allocation.remainingShort', { remaining: formatAmount(locale, a.unit, a.available) })})
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t('application.resourceClass')} error={fe.resourceClassId}>
              <select value={resourceClassId} onChange={(e) => setResourceClassId(e.target.value)}>
                {classesForAllocation.map((c) => (
                  <option key={c.id} value={c.id}>
                    {c.name} · {c.gpusPerNode} × {c.gpuModel}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          {rc && <p className="mt-2 text-xs text-slate-500">{t('jobs.siteNote', { site: rc.siteName, walltime: rc.maxWalltimeSeconds / 3600, gpusPerNode: rc.gpusPerNode })}</p>}
        </Card>

        {template === 'fine-tune' && (
          <Card title={t('jobs.fineTuneTitle')}>
            <div className="grid gap-4 md:grid-cols-3">
              <Field label={t('jobs.modelSize')} hint={t('jobs.modelSizeHint')}>
                <input type="number" min={0.1} step={0.1} value={params} onChange={(e) => setParams(e.target.value)} />
              </Field>
              <Field label={t('jobs.tokens')} hint={t('jobs.tokensHint')}>
                <input type="number" min={0.001} step={0.1} value={tokens} onChange={(e) => setTokens(e.target.value)} />
              </Field>
              <Field label={t('jobs.utilisation')} hint={t('jobs.utilisationHint')}>
                <input type="number" min={5} max={90} step={1} value={utilisation} onChange={(e) => setUtilisation(e.target.value)} />
              </Field>
            </div>
            {fineTune.data && (
              <div className="mt-4 rounded-md bg-slate-50 p-3 text-sm" data-testid="fine-tune-estimate">
                <p className="font-medium">{t('jobs.fineTuneRuntime', { hours: Math.round((fineTune.data.runtimeSeconds / 3600) * 10) / 10, walltime: fineTune.data.walltimeSeconds / 3600 })}</p>
                <p className="mt-1 text-xs text-slate-600">
                  {t('jobs.fineTuneAssumptions', { params: Number(params), tokens: Number(tokens), flops: formatScientific(locale, fineTune.data.totalFlops), gpus: gpuCount, model: fineTune.data.gpuModel, peak: fineTune.data.peakTflops, util: fineTune.data.utilisationPercent })}
                </p>
              </div>
            )}
          </Card>
        )}

        <Card title={t('jobs.what')}>
          <div className="grid gap-4 md:grid-cols-2">
            <Field label={t('jobs.name')} error={fe.name}>
              <input value={name} onChange={(e) => setName(e.target.value)} maxLength={120} required />
            </Field>
            <Field label={t('jobs.kind')} error={fe.kind}>
              <select value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
                {(['training', 'fine_tuning', 'inference', 'batch'] as const).map((k) => (
                  <option key={k} value={k}>
                    {t(`jobKind.${k}`)}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={t('jobs.gpus')} error={fe.gpus}>
              <input type="number" min={1} step={1} value={gpus} onChange={(e) => setGpus(e.target.value)} required />
            </Field>
            <Field label={t('jobs.nodes')} error={fe.nodes}>
              <input type="number" min={1} step={1} value={nodes} onChange={(e) => setNodes(e.target.value)} required />
            </Field>
            {template === 'custom' && (
              <Field label={t('jobs.walltime')} error={fe.walltimeMinutes} hint={kind === 'inference' ? t('jobs.walltimeInferenceHint') : t('jobs.walltimeHint')}>
                <input type="number" min={0.1} step={0.5} value={walltimeHours} onChange={(e) => setWalltimeHours(e.target.value)} required />
              </Field>
            )}
            {template === 'fine-tune' && fe.walltimeMinutes && <p className="text-sm text-red-700">{fe.walltimeMinutes}</p>}
            {kind === 'inference' && (
              <Field label={t('jobs.servedModel')} error={fe.servedModel} hint={t('jobs.servedModelHint')}>
                <input value={servedModel} onChange={(e) => setServedModel(e.target.value)} maxLength={100} placeholder="acme/support-7b" className="font-mono" />
              </Field>
            )}
            <Field label={t('jobs.image')} error={fe.image}>
              <input value={image} onChange={(e) => setImage(e.target.value)} required />
            </Field>
            <Field label={t('jobs.command')} error={fe.command} hint={t('jobs.commandHint')} className="md:col-span-2">
              <textarea rows={5} className="font-mono" value={command} onChange={(e) => setCommand(e.target.value)} required />
            </Field>
            <Field label={t('jobs.env')} error={fe.env ?? Object.entries(fe).find(([k]) => k.startsWith('env.'))?.[1]} hint={t('jobs.envHint')} className="md:col-span-2">
              <textarea rows={3} className="font-mono" value={envText} onChange={(e) => setEnvText(e.target.value)} placeholder="HF_HOME=/scratch/hf" />
            </Field>
          </div>
        </Card>

        {rc && (
          <Card title={t('jobs.inputs.title')}>
            <InputsPicker key={inputsAt} projectId={allocation.projectId} site={rc.siteId} value={inputs} onChange={(paths) => setInputsPicked({ at: inputsAt, paths })} error={fe.inputs} />
          </Card>
        )}

        {kind !== 'inference' && template === 'custom' && (
          <Card title={t('jobs.sweep.title')}>
            <SweepFields value={sweep} onChange={setSweep} error={fe.array ?? (estimate.error ? formErrors(estimate.error, ['array']).fields.array : undefined)} />
          </Card>
        )}
      </div>

      <aside className="space-y-4 lg:sticky lg:top-4 lg:self-start">
        <Card title={t('jobs.beforeYouSubmit')}>
          {estimate.data ? (
            <dl className="space-y-3 text-sm" data-testid="job-estimate" aria-live="polite">
              <div>
                <dt className="text-slate-500">{t('jobs.reserves')}</dt>
                <dd className="text-lg font-semibold tabular-nums">{formatAmount(locale, estimate.data.unit, estimate.data.reservation)}</dd>
                {estimate.data.tasks > 1 && (
                  <dd className="text-xs text-slate-500" data-testid="job-estimate-tasks">
                    {t('jobs.sweep.forTasks', { tasks: estimate.data.tasks })}
                  </dd>
                )}
                {estimate.data.unit === 'cents' && <dd className="text-xs text-slate-500">{formatGpuHours(locale, estimate.data.reservedGpuSeconds)}</dd>}
                <dd className="text-xs text-slate-500">{t('jobs.reservesHint')}</dd>
              </div>
              <div>
                <dt className="text-slate-500">{runtimeSeconds ? t('jobs.expectedCost') : t('jobs.maxCost')}</dt>
                <dd className="text-lg font-semibold tabular-nums">{formatEuros(locale, runtimeSeconds ? estimate.data.expectedCostCents : estimate.data.maxCostCents)}</dd>
                <dd className="text-xs text-slate-500">{t('jobs.tariff', { price: formatEuros(locale, estimate.data.centsPerGpuHour) })}{companyTenant ? '' : ` · ${t('jobs.academicValue')}`}</dd>
              </div>
              <div>
                <dt className="text-slate-500">{t('jobs.left')}</dt>
                <dd className="tabular-nums" data-testid="job-room">{formatAmount(locale, estimate.data.room.unit, Math.max(0, estimate.data.room.available))}</dd>
                {estimate.data.room.monthCapLeftCents !== null && <dd className="text-xs text-slate-500">{t('jobs.leftUnderCap', { left: formatEuros(locale, estimate.data.room.monthCapLeftCents) })}</dd>}
                {(estimate.data.room.budgetsLeftCents ?? []).map((b) => (
                  <dd key={b.limit} className="text-xs text-slate-500" data-testid="job-budget-left">
                    {t(LEFT_KEYS[b.limit], { left: formatEuros(locale, b.leftCents) })}
                  </dd>
                ))}
                {estimate.data.room.gpusAtOnce && <dd className="text-xs text-slate-500">{t('jobs.gpusAtOnceNow', { limit: estimate.data.room.gpusAtOnce.limit, inUse: estimate.data.room.gpusAtOnce.inUse })}</dd>}
              </div>
              <div>
                <dt className="text-slate-500">{t('jobs.energy')}</dt>
                <dd className="text-lg font-semibold tabular-nums">{formatKwh(locale, runtimeSeconds ? estimate.data.expectedEnergyWh : estimate.data.maxEnergyWh)}</dd>
                <dd className="text-xs text-slate-500">{t('jobs.energyHint', { util: estimate.data.assumedGpuUtilPercent })}</dd>
              </div>
            </dl>
          ) : (
            <p className="text-sm text-slate-500">{estimate.isFetching ? t('common.working') : t('jobs.fillToEstimate')}</p>
          )}
          {estimate.data && estimate.data.overdueInvoices.length > 0 && (
            <div className="mt-4" data-testid="overdue-warning">
              <Alert tone="error" title={t('jobs.overdue.title')}>
                {t('job.invoicesOverdue', { numbers: estimate.data.overdueInvoices.join(', ') })}
              </Alert>
            </div>
          )}
          {estimate.data?.powerCap && (
            <div className="mt-4" data-testid="power-cap-warning">
              <Alert tone="error" title={t('jobs.powerCap.title')}>
                {estimate.data.powerCap.maxGpus > 0
                  ? t('job.overPowerCap', { requested: estimate.data.powerCap.requestedGpus, capKw: estimate.data.powerCap.capKw, max: estimate.data.powerCap.maxGpus })
                  : t('job.overPowerCapIdle', { capKw: estimate.data.powerCap.capKw })}
              </Alert>
            </div>
          )}
          {shortfalls.length > 0 && (
            <div className="mt-4" data-testid="reservation-warning">
              <Alert tone="warning" title={t('jobs.fit.title')}>
                <ul className="list-disc space-y-1 pl-4">
                  {shortfalls.map((s) => (
                    <li key={s.limit}>
                      {shortfallText(s)}
                      {s.limit !== 'gpusAtOnce' && s.maxWalltimeSeconds > 0 && template === 'custom' && (
                        <button type="button" className="ml-1 font-medium underline" onClick={() => setWalltimeHours(String(Math.floor((s.maxWalltimeSeconds / 3600) * 100) / 100))}>
                          {t('jobs.fit.useWalltime', { walltime: formatDuration(s.maxWalltimeSeconds) })}
                        </button>
                      )}
                    </li>
                  ))}
                </ul>
                <p className="mt-2 text-xs">{t('jobs.fit.submitAnyway')}</p>
              </Alert>
            </div>
          )}
          {kind !== 'inference' && (
            <div className="mt-4 border-t border-slate-200 pt-4">
              <h3 className="mb-2 text-sm font-medium">{t('jobs.lowCarbon.title')}</h3>
              <LowCarbonStart
                job={{ allocationId, resourceClassId, gpus: gpuCount || 1, nodes: nodeCount || 1, walltimeMinutes: Math.max(1, walltimeMinutes), runtimeSeconds }}
                enabled={Boolean(resourceClassId) && gpuCount > 0 && nodeCount > 0 && walltimeMinutes > 0}
                onBeginChange={setBegin}
              />
            </div>
          )}
          <div className="mt-4 border-t border-slate-200 pt-4">
            <h3 className="mb-2 text-sm font-medium">{t('jobs.after.title')}</h3>
            <RunAfter key={allocation.projectId} projectId={allocation.projectId} value={dependency} onChange={setDependency} error={fe['dependency.jobIds']} />
          </div>
          <Button type="submit" disabled={submit.isPending || !resourceClassId} className="mt-5 w-full">
            {submit.isPending ? t('common.working') : t('jobs.submit')}
          </Button>
        </Card>
      </aside>
    </form>
  );
}
