'use client';
// Staff admins credit part or all of an invoice's net amount; the invoice itself never changes.
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Button } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { eurosToCents } from '~/app/_lib/euros';
import { useTRPC } from '~/app/_lib/trpc';

export function CreditNoteForm({ invoiceId, remainingLabel }: { invoiceId: string; remainingLabel: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [open, setOpen] = useState(false);
  const [errors, setErrors] = useState<{ message?: string; fields: Record<string, string> }>({ fields: {} });
  const issue = useMutation(trpc.invoice.creditNote.mutationOptions());

  if (!open) {
    return (
      <Button variant="secondary" onClick={() => setOpen(true)}>
        {t('invoice.creditNote.open')}
      </Button>
    );
  }

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const netCents = eurosToCents(formValue(form, 'amount'));
    const reason = formValue(form, 'reason');
    if (netCents === undefined || netCents < 1) {
      setErrors({ fields: { netCents: t('invoice.creditNote.amountInvalid') } });
      return;
    }
    setErrors({ fields: {} });
    try {
      await issue.mutateAsync({ invoiceId, netCents, reason });
      setOpen(false);
      router.refresh();
    } catch (e) {
      setErrors(formErrors(e, ['netCents', 'reason']));
    }
  }

  return (
    <form onSubmit={onSubmit} className="grid max-w-xl gap-3" noValidate>
      <Field label={t('invoice.creditNote.amount')} hint={t('invoice.creditNote.amountHint', { remaining: remainingLabel })} error={errors.fields.netCents}>
        <input name="amount" inputMode="decimal" required autoFocus placeholder="0.00" />
      </Field>
      <Field label={t('common.reason')} error={errors.fields.reason}>
        <input name="reason" required maxLength={1000} />
      </Field>
      {errors.message && (
        <p role="alert" className="text-sm text-red-700">
          {errors.message}
        </p>
      )}
      <div className="flex gap-2">
        <Button type="submit" disabled={issue.isPending}>
          {issue.isPending ? t('common.working') : t('invoice.creditNote.submit')}
        </Button>
        <Button variant="secondary" onClick={() => setOpen(false)}>
          {t('common.cancel')}
        </Button>
      </div>
    </form>
  );
}
