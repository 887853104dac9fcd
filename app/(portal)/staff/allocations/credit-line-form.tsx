'use client';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { CapChoiceField, capEurosOf, centsOfTypedEuros } from '~/app/_components/cap-choice-field';
import { TenantCapFigures } from '~/app/_components/cap-figures';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import type { RouterOutputs } from '~/app/_lib/types';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

/**
 * Staff admins give a company project a credit line in euros for a period, with a reason, and decide
 * the tenant's monthly cap with it: the form shows the tenant's cap, lines and spend, and suggests the
 * cap for the lines with the new one.
 */
export function CreditLineForm({ projects, today, yearLater }: { projects: RouterOutputs['staff']['companyProjects']; today: string; yearLater: string }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const grant = useMutation(trpc.staff.grantCreditLine.mutationOptions());
  const [projectId, setProjectId] = useState(projects[0]?.id ?? '');
  const [amount, setAmount] = useState('');
  const [granted, setGranted] = useState(0);
  const { errors, done, onSubmit } = useFormMutation(grant.mutateAsync, {
    read: (form) => ({
      projectId: formValue(form, 'projectId'),
      amountEuros: Number(formValue(form, 'amountEuros')),
      periodStart: formValue(form, 'periodStart'),
      periodEnd: formValue(form, 'periodEnd'),
      reason: formValue(form, 'reason'),
      capEuros: capEurosOf(form),
    }),
    fields: ['projectId', 'amountEuros', 'periodStart', 'periodEnd', 'reason', 'capEuros'],
    onDone: () => {
      setAmount('');
      setGranted((n) => n + 1);
    },
  });
  const money = (projects.find((p) => p.id === projectId) ?? projects[0])?.money;
  if (!money) return null;
  return (
    <Card title={t('credit.title')}>
      <p className="mb-4 text-sm text-slate-600">{t('credit.intro')}</p>
      <form onSubmit={onSubmit} className="grid items-start gap-4 md:grid-cols-3" noValidate aria-label={t('credit.title')}>
        <Field label={t('credit.project')} error={errors.fields.projectId} className="md:col-span-3">
          <select name="projectId" value={projectId} onChange={(e) => setProjectId(e.target.value)}>
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.orgName} — {p.title}
              </option>
            ))}
          </select>
        </Field>
        <TenantCapFigures figures={money} t={t} locale={locale} className="md:col-span-3" />
        <Field label={t('credit.amount')} error={errors.fields.amountEuros}>
          <input name="amountEuros" type="number" inputMode="numeric" min={1} step={1} required value={amount} onChange={(e) => setAmount(e.target.value)} />
        </Field>
        <CapChoiceField
          key={`${money.orgId}:${granted}`}
          capCents={money.capCents}
          linesCents={money.linesCents}
          changeCents={centsOfTypedEuros(amount)}
          error={errors.fields.capEuros}
          className="md:col-span-2"
        />
        <Field label={t('application.periodStart')} error={errors.fields.periodStart}>
          <input name="periodStart" type="date" defaultValue={today} required />
        </Field>
        <Field label={t('application.periodEnd')} error={errors.fields.periodEnd}>
          <input name="periodEnd" type="date" defaultValue={yearLater} required />
        </Field>
        <Field label={t('common.reason')} error={errors.fields.reason}>
          <input name="reason" required maxLength={1000} />
        </Field>
        <Button type="submit" disabled={grant.isPending}>
          {grant.isPending ? t('common.working') : t('credit.submit')}
        </Button>
      </form>
      <div className="mt-3">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('credit.done')}</Alert>}
      </div>
    </Card>
  );
}
