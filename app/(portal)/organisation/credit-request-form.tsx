'use client';
import { useMutation } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Badge, Button, Card } from '~/app/_components/ui';
import { formatDateTime, formatDay, formatEuros } from '~/server/i18n/format';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

export interface CreditLineView {
  allocationId: string;
  projectTitle: string;
  grantedCents: number;
  periodEnd: string;
}

export interface CreditRequestView {
  id: string;
  projectTitle: string;
  currentCents: number;
  requestedCents: number;
  status: 'submitted' | 'approved' | 'rejected';
  createdAt: string;
  decisionComment: string | null;
}

const TONE = { submitted: 'amber', approved: 'green', rejected: 'red' } as const;

/** A company owner asks for a larger credit line (the new line in euros, with a reason); staff decide in their queue. */
export function CreditRequestForm({ lines, requests }: { lines: CreditLineView[]; requests: CreditRequestView[] }) {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const ask = useMutation(trpc.organisation.requestCreditLine.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(ask.mutateAsync, {
    read: (form) => ({ allocationId: formValue(form, 'allocationId'), amountEuros: Number(formValue(form, 'amountEuros')), reason: formValue(form, 'reason') }),
    fields: ['allocationId', 'amountEuros', 'reason'],
  });
  if (lines.length === 0 && requests.length === 0) return null;
  return (
    <Card title={t('creditRequest.title')}>
      <p className="mb-4 text-sm text-slate-600">{t('creditRequest.intro')}</p>
      {lines.length > 0 && (
        <form onSubmit={onSubmit} className="grid items-start gap-4 md:grid-cols-3" noValidate>
          <Field label={t('creditRequest.line')} error={errors.fields.allocationId} className="md:col-span-3">
            {/* The only credit line is preselected; with several the owner picks one. */}
            <select name="allocationId" defaultValue={lines[0]!.allocationId}>
              {lines.map((l) => (
                <option key={l.allocationId} value={l.allocationId}>
                  {t('creditRequest.lineOption', { project: l.projectTitle, amount: formatEuros(locale, l.grantedCents), end: formatDay(locale, l.periodEnd) })}
                </option>
              ))}
            </select>
          </Field>
          <Field label={t('creditRequest.amount')} error={errors.fields.amountEuros}>
            <input name="amountEuros" type="number" min={1} step={1} required />
          </Field>
          <Field label={t('creditRequest.reason')} error={errors.fields.reason} className="md:col-span-2">
            <input name="reason" required maxLength={1000} />
          </Field>
          <Button type="submit" disabled={ask.isPending}>
            {ask.isPending ? t('common.working') : t('creditRequest.submit')}
          </Button>
        </form>
      )}
      <div className="mt-3">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('creditRequest.done')}</Alert>}
      </div>
      {requests.length > 0 && (
        <>
          <h3 className="mt-6 text-sm font-semibold">{t('creditRequest.history')}</h3>
          <ul className="mt-2 divide-y divide-slate-100 rounded-md ring-1 ring-slate-200">
            {requests.map((r) => (
              <li key={r.id} className="px-3 py-2 text-sm" data-testid="credit-request">
                <div className="flex flex-wrap items-center gap-2">
                  <Badge tone={TONE[r.status]}>{t(`creditRequest.status.${r.status}`)}</Badge>
                  <span className="font-medium">{t('creditRequest.change', { from: formatEuros(locale, r.currentCents), to: formatEuros(locale, r.requestedCents) })}</span>
                  <span className="text-slate-500">
                    {r.projectTitle} · {formatDateTime(locale, new Date(r.createdAt), timeZone)}
                  </span>
                </div>
                {r.decisionComment && <p className="mt-1 text-slate-700">{r.decisionComment}</p>}
              </li>
            ))}
          </ul>
        </>
      )}
    </Card>
  );
}
