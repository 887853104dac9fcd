'use client';
// Staff admins record money received on an invoice, or reverse a recorded payment (a reversal row; nothing is changed or deleted).
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { eurosToCents } from '~/app/_lib/euros';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

export function RecordPaymentForm({ invoiceId, openLabel, today }: { invoiceId: string; openLabel: string; today: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const record = useMutation(trpc.invoice.recordPayment.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(record.mutateAsync, {
    // An amount that is not one in euros goes out as 0, which the server refuses on the field.
    read: (form) => ({ invoiceId, paidOn: formValue(form, 'paidOn'), amountCents: eurosToCents(formValue(form, 'amount')) ?? 0, reference: formValue(form, 'reference') }),
    fields: ['paidOn', 'amountCents', 'reference'],
  });
  return (
    <form onSubmit={onSubmit} className="grid grid-cols-1 items-start gap-4 md:grid-cols-3" noValidate>
      <Field label={t('payment.paidOn')} error={errors.fields.paidOn}>
        <input name="paidOn" type="date" required defaultValue={today} max={today} />
      </Field>
      <Field label={t('payment.record.amount')} hint={t('payment.record.amountHint', { open: openLabel })} error={errors.fields.amountCents}>
        <input name="amount" inputMode="decimal" required placeholder="0.00" />
      </Field>
      <Field label={t('payment.reference')} error={errors.fields.reference}>
        <input name="reference" required maxLength={200} />
      </Field>
      <div className="md:col-span-3">
        <Button type="submit" disabled={record.isPending}>
          {record.isPending ? t('common.working') : t('payment.record.submit')}
        </Button>
      </div>
      <div className="md:col-span-3">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('payment.record.done')}</Alert>}
      </div>
    </form>
  );
}

export function ReversePaymentForm({ paymentId, label }: { paymentId: string; label: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const [open, setOpen] = useState(false);
  const reverse = useMutation(trpc.invoice.reversePayment.mutationOptions());
  const { errors, onSubmit } = useFormMutation(reverse.mutateAsync, {
    read: (form) => ({ paymentId, reason: formValue(form, 'reason') }),
    fields: ['reason'],
    onDone: () => setOpen(false),
  });
  if (!open) {
    return (
      <Button variant="secondary" onClick={() => setOpen(true)} aria-label={label}>
        {t('payment.reverse.submit')}
      </Button>
    );
  }
  return (
    <form onSubmit={onSubmit} className="flex flex-wrap items-end gap-2" noValidate>
      <Field label={t('payment.reverse.reason')} error={errors.fields.reason ?? errors.message}>
        <input name="reason" required maxLength={1000} autoFocus />
      </Field>
      <Button type="submit" disabled={reverse.isPending}>
        {reverse.isPending ? t('common.working') : t('payment.reverse.submit')}
      </Button>
      <Button variant="secondary" onClick={() => setOpen(false)}>
        {t('common.cancel')}
      </Button>
    </form>
  );
}
