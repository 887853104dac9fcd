'use client';
import { useMutation } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

/** Staff raise or lower a budget (GPU-hours or euros), always with a reason for the audit log. */
export function AdjustForm({ allocationId, unit }: { allocationId: string; unit: 'gpu_seconds' | 'cents' }) {
  const { t } = useT();
  const trpc = useTRPC();
  const adjust = useMutation(trpc.staff.adjustAllocation.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(adjust.mutateAsync, {
    read: (form) => ({ allocationId, amount: Number(formValue(form, 'amount')), reason: formValue(form, 'reason') }),
    fields: ['amount', 'reason'],
  });
  return (
    <Card title={t('adjust.title')}>
      <form onSubmit={onSubmit} className="grid items-start gap-4 sm:grid-cols-[12rem_1fr_auto]" noValidate>
        <Field label={unit === 'cents' ? t('adjust.amountEuros') : t('adjust.amountHours')} error={errors.fields.amount} hint={t('adjust.amountHint')}>
          <input name="amount" type="number" step={1} required />
        </Field>
        <Field label={t('common.reason')} error={errors.fields.reason}>
          <input name="reason" required maxLength={1000} />
        </Field>
        <Button type="submit" disabled={adjust.isPending} className="sm:mt-6">
          {adjust.isPending ? t('common.working') : t('adjust.submit')}
        </Button>
      </form>
      <div className="mt-3">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('adjust.done')}</Alert>}
      </div>
    </Card>
  );
}
