'use client';
import { useMutation } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

/** Staff admins give a company project a credit line in euros for a period, with a reason. */
export function CreditLineForm({ projects, today, yearLater }: { projects: { id: string; title: string; orgName: string }[]; today: string; yearLater: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const grant = useMutation(trpc.staff.grantCreditLine.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(grant.mutateAsync, {
    read: (form) => ({ projectId: formValue(form, 'projectId'), amountEuros: Number(formValue(form, 'amountEuros')), periodStart: formValue(form, 'periodStart'), periodEnd: formValue(form, 'periodEnd'), reason: formValue(form, 'reason') }),
    fields: ['projectId', 'amountEuros', 'periodStart', 'periodEnd', 'reason'],
  });
  if (projects.length === 0) return null;
  return (
    <Card title={t('credit.title')}>
      <p className="mb-4 text-sm text-slate-600">{t('credit.intro')}</p>
      <form onSubmit={onSubmit} className="grid items-start gap-4 md:grid-cols-3" noValidate>
        <Field label={t('credit.project')} error={errors.fields.projectId} className="md:col-span-3">
          <select name="projectId">
            {projects.map((p) => (
              <option key={p.id} value={p.id}>
                {p.orgName} — {p.title}
              </option>
            ))}
          </select>
        </Field>
        <Field label={t('credit.amount')} error={errors.fields.amountEuros}>
          <input name="amountEuros" type="number" min={1} step={1} required />
        </Field>
        <Field label={t('application.periodStart')} error={errors.fields.periodStart}>
          <input name="periodStart" type="date" defaultValue={today} required />
        </Field>
        <Field label={t('application.periodEnd')} error={errors.fields.periodEnd}>
          <input name="periodEnd" type="date" defaultValue={yearLater} required />
        </Field>
        <Field label={t('common.reason')} error={errors.fields.reason} className="md:col-span-2">
          <input name="reason" required maxLength={1000} />
        </Field>
        <Button type="submit" disabled={grant.isPending} className="md:mt-6">
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
