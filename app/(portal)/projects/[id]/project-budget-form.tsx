'use client';
import { useMutation } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formatEuros } from '~/server/i18n/format';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

export interface ProjectBudgetView {
  monthlyCents: number | null;
  totalCents: number | null;
  costCentre: string | null;
  purchaseOrder: string | null;
}

/** An empty euro field is no budget; anything else is sent as typed (the server refuses what is not whole euros). */
const eurosOrNull = (value: string) => (value.trim() === '' ? null : Number(value));

/** A company's owners and managers set a project's monthly and total budget, cost centre and purchase-order number; others read them. */
export function ProjectBudgetForm({ projectId, budget, canEdit }: { projectId: string; budget: ProjectBudgetView | null; canEdit: boolean }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const save = useMutation(trpc.project.setBudget.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(save.mutateAsync, {
    read: (form) => ({
      projectId,
      monthlyEuros: eurosOrNull(formValue(form, 'monthlyEuros')),
      totalEuros: eurosOrNull(formValue(form, 'totalEuros')),
      costCentre: formValue(form, 'costCentre'),
      purchaseOrder: formValue(form, 'purchaseOrder'),
    }),
    fields: ['monthlyEuros', 'totalEuros', 'costCentre', 'purchaseOrder'],
  });
  const euros = (cents: number | null | undefined) => (cents === null || cents === undefined ? t('budget.none') : formatEuros(locale, cents));
  return (
    <Card title={t('budget.title')}>
      <p className="mb-2 text-sm text-slate-600">{t('budget.intro')}</p>
      <p className="mb-4 text-sm font-medium" data-testid="project-budget-current">
        {t('budget.current', { monthly: euros(budget?.monthlyCents), total: euros(budget?.totalCents) })}
      </p>
      {canEdit && (
        // Keyed by the saved values: after a save the fields show what the server kept.
        <form key={JSON.stringify(budget)} onSubmit={onSubmit} className="grid items-start gap-4 sm:grid-cols-2" noValidate>
          <Field label={t('budget.monthly')} error={errors.fields.monthlyEuros}>
            <input name="monthlyEuros" type="number" min={0} step={1} inputMode="numeric" defaultValue={budget?.monthlyCents == null ? '' : budget.monthlyCents / 100} />
          </Field>
          <Field label={t('budget.total')} error={errors.fields.totalEuros}>
            <input name="totalEuros" type="number" min={0} step={1} inputMode="numeric" defaultValue={budget?.totalCents == null ? '' : budget.totalCents / 100} />
          </Field>
          <Field label={t('budget.costCentre')} error={errors.fields.costCentre} hint={t('budget.invoiceHint')}>
            <input name="costCentre" maxLength={64} defaultValue={budget?.costCentre ?? ''} />
          </Field>
          <Field label={t('budget.purchaseOrder')} error={errors.fields.purchaseOrder}>
            <input name="purchaseOrder" maxLength={64} defaultValue={budget?.purchaseOrder ?? ''} />
          </Field>
          <div className="sm:col-span-2">
            <Button type="submit" disabled={save.isPending}>
              {save.isPending ? t('common.working') : t('budget.save')}
            </Button>
          </div>
        </form>
      )}
      {!canEdit && (budget?.costCentre || budget?.purchaseOrder) && (
        <p className="text-sm text-slate-600">
          {[budget.costCentre && t('invoice.line.costCentre', { costCentre: budget.costCentre }), budget.purchaseOrder && t('invoice.line.purchaseOrder', { purchaseOrder: budget.purchaseOrder })].filter(Boolean).join(' · ')}
        </p>
      )}
      <div className="mt-3">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('budget.saved')}</Alert>}
      </div>
    </Card>
  );
}
