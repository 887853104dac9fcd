'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

/** Staff raise or lower a budget (GPU-hours or euros), always with a reason for the audit log. */
export function AdjustForm({ allocationId, unit }: { allocationId: string; unit: 'gpu_seconds' | 'cents' }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [done, setDone] = useState(false);
  const adjust = useMutation(trpc.staff.adjustAllocation.mutationOptions());
  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    setErrors({ fields: {} });
    setDone(false);
    try {
      await adjust.mutateAsync({ allocationId, amount: Number(formValue(form, 'amount')), reason: formValue(form, 'reason') });
      formElement.reset();
      setDone(true);
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, ['amount', 'reason']));
    }
  }
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
