'use client';
// The proposal: a name, the days of history to replay, and one change to the current machine. The
// fields of the change follow its kind; the server checks everything again and names the field.
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';
import { formatDecimal } from '~/server/i18n/format';

const KINDS = ['nodes', 'newClass', 'powerCap', 'pue', 'grid', 'policy'] as const;
type Kind = (typeof KINDS)[number];
const POLICIES = ['fifo', 'easy', 'multifactor'] as const;

/** A number typed with a decimal comma or point; NaN when empty or not a number (the server names the field). */
function numberOf(raw: string): number {
  return raw.trim() === '' ? Number.NaN : Number(raw.replace(',', '.'));
}

export function NewRunForm({ defaultFrom, defaultTo, today }: { defaultFrom: string; defaultTo: string; today: string }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const machine = useQuery(trpc.whatIf.machine.queryOptions());
  const [kind, setKind] = useState<Kind>('nodes');
  const queryClient = useQueryClient();
  const create = useMutation(trpc.whatIf.create.mutationOptions());
  const change = (form: FormData) => {
    const v = (name: string) => formValue(form, name);
    switch (kind) {
      case 'nodes':
        return { kind, classId: v('classId'), delta: numberOf(v('delta')) };
      case 'newClass':
        return { kind, id: v('id'), siteId: v('siteId'), templateClassId: v('templateClassId'), nodes: numberOf(v('nodes')), gpusPerNode: numberOf(v('gpusPerNode')), fromClassId: v('fromClassId'), sharePercent: numberOf(v('sharePercent')) };
      case 'powerCap':
        return { kind, siteId: v('siteId'), capKw: v('capKw').trim() === '' ? null : numberOf(v('capKw')) };
      case 'pue':
        return { kind, siteId: v('siteId'), pueMilli: Math.round(numberOf(v('pue')) * 1000) };
      case 'grid':
        return { kind, siteId: v('siteId'), gco2PerKwh: numberOf(v('grid')) };
      case 'policy':
        return { kind, policy: v('policy') as (typeof POLICIES)[number] };
    }
  };
  const fieldNames = ['classId', 'delta', 'id', 'siteId', 'templateClassId', 'nodes', 'gpusPerNode', 'fromClassId', 'sharePercent', 'capKw', 'pueMilli', 'gco2PerKwh', 'policy'];
  const { errors, done, onSubmit } = useFormMutation(create.mutateAsync, {
    read: (form) => ({ title: formValue(form, 'title'), from: formValue(form, 'from'), to: formValue(form, 'to'), changes: [change(form)] }),
    fields: ['title', 'from', 'to', ...fieldNames.map((f) => `changes.0.${f}`)],
    // The list is stale now: drop it, so "back" from the run shows the new run whatever the cache holds.
    onDone: ({ id }) => {
      void queryClient.invalidateQueries({ queryKey: trpc.whatIf.list.queryKey() });
      router.push(`/staff/what-if/${id}`);
    },
  });
  const err = (name: string) => errors.fields[`changes.0.${name}`];
  const classes = machine.data?.classes ?? [];
  const sites = machine.data?.sites ?? [];
  const classOptions = classes.map((c) => (
    <option key={c.id} value={c.id}>
      {`${c.id} · ${c.name} (${c.nodes} × ${c.gpusPerNode} GPUs)`}
    </option>
  ));
  const siteOptions = sites.map((s) => (
    <option key={s.id} value={s.id}>
      {`${s.id} · ${s.name}`}
    </option>
  ));
  const firstSite = sites[0];
  return (
    <Card title={t('whatIf.form.heading')}>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        <div className="grid gap-4 sm:grid-cols-[2fr_1fr_1fr]">
          <Field label={t('whatIf.form.name')} hint={t('whatIf.form.nameHint')} error={errors.fields.title}>
            <input name="title" required maxLength={120} />
          </Field>
          <Field label={t('whatIf.form.from')} hint={t('whatIf.form.periodHint')} error={errors.fields.from}>
            <input name="from" type="date" defaultValue={defaultFrom} max={today} required />
          </Field>
          <Field label={t('whatIf.form.to')} error={errors.fields.to}>
            <input name="to" type="date" defaultValue={defaultTo} max={today} required />
          </Field>
        </div>
        <Field label={t('whatIf.form.kind')}>
          <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as Kind)} className="sm:max-w-md">
            {KINDS.map((k) => (
              <option key={k} value={k}>
                {t(`whatIf.kind.${k}`)}
              </option>
            ))}
          </select>
        </Field>
        {machine.data && (
          <div key={kind} className="grid gap-4 sm:grid-cols-3">
            {kind === 'nodes' && (
              <>
                <Field label={t('whatIf.field.class')} error={err('classId')}>
                  <select name="classId" defaultValue="h100">{classOptions}</select>
                </Field>
                <Field label={t('whatIf.field.delta')} error={err('delta')}>
                  <input name="delta" type="number" step={1} defaultValue={8} required />
                </Field>
              </>
            )}
            {kind === 'newClass' && (
              <>
                <Field label={t('whatIf.field.newId')} error={err('id')}>
                  <input name="id" defaultValue="proposed" maxLength={32} required />
                </Field>
                <Field label={t('whatIf.field.site')} error={err('siteId')}>
                  <select name="siteId">{siteOptions}</select>
                </Field>
                <Field label={t('whatIf.field.template')} error={err('templateClassId')}>
                  <select name="templateClassId">{classOptions}</select>
                </Field>
                <Field label={t('whatIf.field.nodes')} error={err('nodes')}>
                  <input name="nodes" type="number" min={1} step={1} defaultValue={4} required />
                </Field>
                <Field label={t('whatIf.field.gpusPerNode')} error={err('gpusPerNode')}>
                  <input name="gpusPerNode" type="number" min={1} max={16} step={1} defaultValue={8} required />
                </Field>
                <Field label={t('whatIf.field.fromClass')} error={err('fromClassId')}>
                  <select name="fromClassId">{classOptions}</select>
                </Field>
                <Field label={t('whatIf.field.share')} error={err('sharePercent')}>
                  <input name="sharePercent" type="number" min={1} max={100} step={1} defaultValue={30} required />
                </Field>
              </>
            )}
            {(kind === 'powerCap' || kind === 'pue' || kind === 'grid') && (
              <Field label={t('whatIf.field.site')} error={err('siteId')}>
                <select name="siteId">{siteOptions}</select>
              </Field>
            )}
            {kind === 'powerCap' && (
              <Field label={t('whatIf.field.capKw')} hint={t('whatIf.field.capHint')} error={err('capKw')}>
                <input name="capKw" inputMode="decimal" defaultValue="80" />
              </Field>
            )}
            {kind === 'pue' && (
              <Field label={t('whatIf.field.pue')} error={err('pueMilli')}>
                <input name="pue" inputMode="decimal" defaultValue={firstSite ? formatDecimal(locale, firstSite.pueMilli / 1000, 2) : '1.2'} required />
              </Field>
            )}
            {kind === 'grid' && (
              <Field label={t('whatIf.field.grid')} error={err('gco2PerKwh')}>
                <input name="grid" type="number" min={0} max={2000} step={1} defaultValue={firstSite?.gridGco2PerKwh ?? 300} required />
              </Field>
            )}
            {kind === 'policy' && (
              <Field label={t('whatIf.field.policy')} error={err('policy')}>
                <select name="policy" defaultValue="fifo">
                  {POLICIES.map((p) => (
                    <option key={p} value={p}>
                      {t(`whatIf.policy.${p}`)}
                    </option>
                  ))}
                </select>
              </Field>
            )}
          </div>
        )}
        <Button type="submit" disabled={create.isPending || !machine.data}>
          {create.isPending ? t('common.working') : t('whatIf.form.submit')}
        </Button>
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('whatIf.form.queued')}</Alert>}
      </form>
    </Card>
  );
}
