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

type CapFiguresOfTenant = NonNullable<RouterOutputs['staff']['allocation']['money']>;

/**
 * Staff raise or lower a budget (GPU-hours or euros), always with a reason for the audit log. A credit
 * line's adjustment decides the tenant's monthly cap with it (`money`: its cap, lines and spend, shown
 * beside the form); GPU-hour budgets have no cap.
 */
export function AdjustForm({ allocationId, unit, money }: { allocationId: string; unit: 'gpu_seconds' | 'cents'; money: CapFiguresOfTenant | null }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const adjust = useMutation(trpc.staff.adjustAllocation.mutationOptions());
  const [amount, setAmount] = useState('');
  const [adjusted, setAdjusted] = useState(0);
  const withCap = unit === 'cents' && money !== null;
  const { errors, done, onSubmit } = useFormMutation(adjust.mutateAsync, {
    read: (form) => ({ allocationId, amount: Number(formValue(form, 'amount')), reason: formValue(form, 'reason'), ...(withCap ? { capEuros: capEurosOf(form) } : {}) }),
    fields: ['amount', 'reason', 'capEuros'],
    onDone: () => {
      setAmount('');
      setAdjusted((n) => n + 1);
    },
  });
  return (
    <Card title={t('adjust.title')}>
      <form onSubmit={onSubmit} className="grid items-start gap-4 sm:grid-cols-[12rem_1fr_auto]" noValidate aria-label={t('adjust.title')}>
        {withCap && <TenantCapFigures figures={money} t={t} locale={locale} className="sm:col-span-3" />}
        <Field label={unit === 'cents' ? t('adjust.amountEuros') : t('adjust.amountHours')} error={errors.fields.amount} hint={t('adjust.amountHint')}>
          <input name="amount" type="number" step={1} required value={amount} onChange={(e) => setAmount(e.target.value)} />
        </Field>
        {withCap && (
          <CapChoiceField
            key={adjusted}
            capCents={money.capCents}
            linesCents={money.linesCents}
            changeCents={centsOfTypedEuros(amount)}
            error={errors.fields.capEuros}
            className="sm:col-span-2"
          />
        )}
        <Field label={t('common.reason')} error={errors.fields.reason} className={withCap ? 'sm:col-span-2' : undefined}>
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
