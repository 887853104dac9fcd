'use client';
// Draft, edit and submit an application: access mode, GPU-hours and storage per resource class, period, justification.
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useMemo, useState } from 'react';
import { Field, inputClass } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card, cx } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formatDateTime, formatDay, formatEuros } from '~/server/i18n/format';
import { useTRPC } from '~/app/_lib/trpc';
import { addDays, daysBetween } from '~/server/core/working-days';

export interface AccessModeOption {
  id: string;
  name: string;
  maxGpuSeconds: number | null;
  /** The smallest new request or renewal (GPU-seconds); null or absent: none. */
  minGpuSeconds?: number | null;
  /** first_come: decided as they come; rounds: gathered by a call's cut-offs (issue #32). */
  intake?: 'first_come' | 'rounds';
  /** A rounds mode: the cut-off of the round a submission now joins; null when no call has one open. */
  nextCutoffAt?: Date | null;
  durationDays: number;
  reviewPath: 'instant' | 'single' | 'full';
  targetDecisionWorkingDays: number;
  /** Storage (GB) a line gets when it names none, and the most a line may ask (null: any). */
  defaultStorageGb?: number;
  maxStorageGb?: number | null;
}

export interface ResourceClassOption {
  id: string;
  name: string;
  gpuModel: string;
  siteName: string;
  centsPerGpuHour: number;
}

export interface ApplicationFormValues {
  accessModeId: string;
  kind: 'new' | 'top_up' | 'renewal';
  baseAllocationId?: string;
  periodStart: string;
  periodEnd: string;
  justification: string;
  gpuHours: Record<string, string>;
  /** Storage asked per class, GB; empty: the mode's default (a top-up: none). */
  storageGb?: Record<string, string>;
}

const SHOWN = ['accessModeId', 'kind', 'baseAllocationId', 'periodStart', 'periodEnd', 'justification', 'lines'];

/** An allocation a top-up or renewal can extend; a top-up keeps its period. */
export interface BaseAllocationOption {
  id: string;
  label: string;
  periodStart: string;
  periodEnd: string;
}

export function ApplicationForm({
  projectId,
  applicationId,
  tenantKind,
  modes,
  classes,
  baseAllocations,
  initial,
}: {
  projectId: string;
  applicationId?: string;
  /** Companies describe their workload; research explains its scientific goal. */
  tenantKind: 'academic' | 'company';
  modes: AccessModeOption[];
  classes: ResourceClassOption[];
  baseAllocations: BaseAllocationOption[];
  initial: ApplicationFormValues;
}) {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [values, setValues] = useState(initial);
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const create = useMutation(trpc.application.create.mutationOptions());
  const update = useMutation(trpc.application.update.mutationOptions());
  const submit = useMutation(trpc.application.submit.mutationOptions());
  const pending = create.isPending || update.isPending || submit.isPending;
  const mode = modes.find((m) => m.id === values.accessModeId);
  const base = baseAllocations.find((a) => a.id === values.baseAllocationId);
  // A top-up adds to its allocation's period, so the form does not ask for one.
  const asksPeriod = values.kind !== 'top_up';

  const lines = useMemo(
    () =>
      Object.entries(values.gpuHours)
        .filter(([, v]) => v.trim() !== '')
        .map(([resourceClassId, v]) => {
          const storage = values.storageGb?.[resourceClassId]?.trim();
          return { resourceClassId, gpuHours: Number(v), ...(storage ? { storageGb: Number(storage) } : {}) };
        }),
    [values.gpuHours, values.storageGb],
  );
  const totalHours = lines.reduce((s, l) => s + (Number.isFinite(l.gpuHours) ? l.gpuHours : 0), 0);
  const valueCents = lines.reduce((s, l) => s + (Number.isFinite(l.gpuHours) ? l.gpuHours : 0) * (classes.find((c) => c.id === l.resourceClassId)?.centsPerGpuHour ?? 0), 0);

  async function save(andSubmit: boolean) {
    setErrors({ fields: {} });
    const payload = {
      accessModeId: values.accessModeId,
      kind: values.kind,
      baseAllocationId: values.kind === 'new' ? undefined : values.baseAllocationId || undefined,
      ...(asksPeriod ? { periodStart: values.periodStart, periodEnd: values.periodEnd } : {}),
      justification: values.justification,
      lines,
    };
    try {
      const id = applicationId ? (await update.mutateAsync({ applicationId, ...payload })).id : (await create.mutateAsync({ projectId, ...payload })).id;
      if (andSubmit) await submit.mutateAsync({ applicationId: id });
      router.push(`/applications/${id}`);
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, SHOWN));
    }
  }

  const set = <K extends keyof ApplicationFormValues>(key: K, value: ApplicationFormValues[K]) => setValues((v) => ({ ...v, [key]: value }));
  // Choosing a top-up or renewal preselects the allocation when the project has only one.
  const chooseKind = (kind: ApplicationFormValues['kind']) =>
    setValues((v) => ({ ...v, kind, baseAllocationId: kind !== 'new' && !v.baseAllocationId && baseAllocations.length === 1 ? baseAllocations[0]!.id : v.baseAllocationId }));
  // Choosing a mode keeps the period within what the mode allows.
  const chooseMode = (m: AccessModeOption) =>
    setValues((v) => ({ ...v, accessModeId: m.id, periodEnd: v.periodStart && daysBetween(v.periodStart, v.periodEnd) > m.durationDays ? addDays(v.periodStart, m.durationDays) : v.periodEnd }));
  const linesError = errors.fields.lines ?? Object.entries(errors.fields).find(([k]) => k.startsWith('lines.'))?.[1];

  return (
    <form
      className="space-y-6"
      noValidate
      onSubmit={(e) => {
        e.preventDefault();
        void save(true);
      }}
    >
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
      <Card title={t('application.mode')}>
        <fieldset>
          <legend className="sr-only">{t('application.mode')}</legend>
          <div className={cx('grid gap-3 md:grid-cols-2', modes.length === 3 ? 'lg:grid-cols-3' : modes.length >= 4 && 'xl:grid-cols-4')}>
            {modes.map((m) => (
              <label key={m.id} className={cx('cursor-pointer rounded-md p-4 ring-1 has-[:focus-visible]:outline-2 has-[:focus-visible]:outline-offset-2 has-[:focus-visible]:outline-indigo-600', values.accessModeId === m.id ? 'bg-indigo-50 ring-2 ring-indigo-600' : 'ring-slate-200 hover:bg-slate-50')}>
                <input type="radio" name="accessModeId" value={m.id} checked={values.accessModeId === m.id} onChange={() => chooseMode(m)} className="sr-only" />
                <span className="block font-medium">{m.name}</span>
                <span className="mt-1 block text-xs text-slate-600">
                  {modeSize(m, t)} · {t('mode.duration', { days: m.durationDays })}
                </span>
                <span className="mt-1 block text-xs text-slate-600">
                  {m.intake === 'rounds' ? t('mode.rounds', { days: m.targetDecisionWorkingDays }) : `${t(`mode.review.${m.reviewPath}`, { days: m.targetDecisionWorkingDays })} · ${t('mode.firstCome')}`}
                </span>
                {m.intake === 'rounds' && (
                  <span className="mt-1 block text-xs font-medium text-slate-700" data-testid={`mode-cutoff-${m.id}`}>
                    {m.nextCutoffAt ? t('mode.nextCutoff', { date: formatDateTime(locale, m.nextCutoffAt, timeZone) }) : t('mode.noOpenCall')}
                  </span>
                )}
                {m.defaultStorageGb !== undefined && (
                  <span className="mt-1 block text-xs text-slate-600">{m.maxStorageGb == null ? t('mode.storage', { gb: m.defaultStorageGb }) : t('mode.storageCapped', { gb: m.defaultStorageGb, max: m.maxStorageGb })}</span>
                )}
              </label>
            ))}
          </div>
          {errors.fields.accessModeId && <p className="mt-2 text-sm text-red-700">{errors.fields.accessModeId}</p>}
        </fieldset>
      </Card>

      <Card title={t('application.request')}>
        <div className="grid gap-4 md:grid-cols-3">
          <Field label={t('application.kind')} error={errors.fields.kind}>
            <select value={values.kind} onChange={(e) => chooseKind(e.target.value as ApplicationFormValues['kind'])}>
              <option value="new">{t('applicationKind.new')}</option>
              <option value="top_up" disabled={baseAllocations.length === 0}>
                {t('applicationKind.top_up')}
              </option>
              <option value="renewal" disabled={baseAllocations.length === 0}>
                {t('applicationKind.renewal')}
              </option>
            </select>
          </Field>
          {asksPeriod ? (
            <>
              <Field label={t('application.periodStart')} error={errors.fields.periodStart}>
                <input type="date" value={values.periodStart} onChange={(e) => set('periodStart', e.target.value)} required />
              </Field>
              <Field label={t('application.periodEnd')} error={errors.fields.periodEnd} hint={mode ? t('mode.duration', { days: mode.durationDays }) : undefined}>
                <input type="date" value={values.periodEnd} onChange={(e) => set('periodEnd', e.target.value)} required />
              </Field>
            </>
          ) : (
            <p className="text-sm text-slate-700 md:col-span-2 md:self-end" data-testid="top-up-period">
              {base ? t('application.topUpPeriod', { start: formatDay(locale, base.periodStart), end: formatDay(locale, base.periodEnd) }) : null}
              {(errors.fields.periodEnd ?? errors.fields.periodStart) && <span className="block text-red-700">{errors.fields.periodEnd ?? errors.fields.periodStart}</span>}
            </p>
          )}
          {values.kind !== 'new' && (
            <Field label={t('application.baseAllocation')} error={errors.fields.baseAllocationId} className="md:col-span-3">
              <select value={values.baseAllocationId ?? ''} onChange={(e) => set('baseAllocationId', e.target.value)}>
                <option value="">—</option>
                {baseAllocations.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.label}
                  </option>
                ))}
              </select>
            </Field>
          )}
        </div>
        <fieldset className="mt-6">
          <legend className="text-sm font-medium text-slate-800">{t('application.gpuHoursPerClass')}</legend>
          <div className="mt-2 divide-y divide-slate-100 rounded-md ring-1 ring-slate-200">
            {classes.map((c) => (
              <div key={c.id} className="grid items-center gap-2 px-3 py-3 sm:grid-cols-[1fr_10rem_10rem]">
                <label htmlFor={`hours-${c.id}`} className="text-sm">
                  <span className="font-medium">{c.name}</span>
                  <span className="block text-xs text-slate-500">
                    {c.gpuModel} · {c.siteName} · {t('application.tariff', { price: formatEuros(locale, c.centsPerGpuHour) })}
                  </span>
                </label>
                <div className="flex items-center gap-2">
                  <input
                    id={`hours-${c.id}`}
                    type="number"
                    inputMode="numeric"
                    min={1}
                    step={1}
                    className={inputClass}
                    value={values.gpuHours[c.id] ?? ''}
                    onChange={(e) => set('gpuHours', { ...values.gpuHours, [c.id]: e.target.value })}
                    aria-label={t('application.gpuHoursFor', { name: c.name })}
                    aria-describedby="lines-error"
                  />
                  <span className="text-sm text-slate-600">GPU-h</span>
                </div>
                {/* Storage in the project's workspace at the class's site (issue #27); empty: the mode's default. */}
                <div className="flex items-center gap-2">
                  <input
                    id={`storage-${c.id}`}
                    type="number"
                    inputMode="numeric"
                    min={0}
                    step={1}
                    className={inputClass}
                    value={values.storageGb?.[c.id] ?? ''}
                    placeholder={values.kind === 'top_up' ? '0' : mode?.defaultStorageGb !== undefined ? String(mode.defaultStorageGb) : undefined}
                    onChange={(e) => set('storageGb', { ...values.storageGb, [c.id]: e.target.value })}
                    aria-label={t('application.storageFor', { name: c.name })}
                    aria-describedby="lines-error storage-hint"
                  />
                  <span className="text-sm text-slate-600">GB</span>
                </div>
              </div>
            ))}
          </div>
          <p id="storage-hint" className="mt-2 text-xs text-slate-500">
            {values.kind === 'top_up' ? t('application.storageHintTopUp') : t('application.storageHint', { gb: mode?.defaultStorageGb ?? 0 })}
          </p>
          {linesError && (
            <p id="lines-error" className="mt-2 text-sm text-red-700">
              {linesError}
            </p>
          )}
          <p className="mt-3 text-sm text-slate-700" aria-live="polite">
            {t('application.total', { hours: totalHours, value: formatEuros(locale, Math.round(valueCents)) })}
          </p>
        </fieldset>
      </Card>

      <Card title={tenantKind === 'company' ? t('application.workloadDescription') : t('application.justification')}>
        <Field
          label={tenantKind === 'company' ? t('application.workloadDescription') : t('application.justification')}
          error={errors.fields.justification}
          hint={tenantKind === 'company' ? t('application.workloadDescriptionHint') : t('application.justificationHint')}
        >
          <textarea rows={8} value={values.justification} onChange={(e) => set('justification', e.target.value)} maxLength={20_000} />
        </Field>
      </Card>

      <div className="flex flex-wrap gap-3">
        <Button type="submit" disabled={pending}>
          {pending ? t('common.working') : t('application.submit')}
        </Button>
        <Button variant="secondary" disabled={pending} onClick={() => void save(false)}>
          {t('application.saveDraft')}
        </Button>
      </div>
    </form>
  );
}

/** modeSize says which request sizes a mode takes: any, up to its cap, from its minimum, or between both (GPU-h). */
function modeSize(m: Pick<AccessModeOption, 'maxGpuSeconds' | 'minGpuSeconds'>, t: ReturnType<typeof useT>['t']): string {
  const min = m.minGpuSeconds ?? null;
  if (min !== null && m.maxGpuSeconds !== null) return t('mode.between', { min: min / 3600, max: m.maxGpuSeconds / 3600 });
  if (min !== null) return t('mode.from', { hours: min / 3600 });
  return m.maxGpuSeconds === null ? t('mode.anySize') : t('mode.upTo', { hours: m.maxGpuSeconds / 3600 });
}
