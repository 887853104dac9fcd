'use client';
// Staff admins: issue last month's invoices now (the worker does it on its own), or one tenant's invoice for a month.
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { formatMonth } from '~/server/documents/invoice-format';

export function IssueMonthlyButton() {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [result, setResult] = useState<{ tone: 'success' | 'warning' | 'error'; text: string }>();
  const run = useMutation(trpc.invoice.issueMonthly.mutationOptions());

  async function onClick() {
    setResult(undefined);
    try {
      const r = await run.mutateAsync();
      if (!r.due) setResult({ tone: 'warning', text: t('invoice.issueMonthly.notDue') });
      else setResult({ tone: r.waiting.length ? 'warning' : 'success', text: t('invoice.issueMonthly.done', { month: formatMonth(locale, r.month), issued: r.issued.length, waiting: r.waiting.length }) });
      router.refresh();
    } catch (e) {
      setResult({ tone: 'error', text: formErrors(e, []).message ?? '' });
    }
  }

  return (
    <div className="space-y-3">
      <Button onClick={onClick} disabled={run.isPending}>
        {run.isPending ? t('common.working') : t('invoice.issueMonthly')}
      </Button>
      {result && <Alert tone={result.tone}>{result.text}</Alert>}
    </div>
  );
}

/** One tenant's invoice for an ended month or, as a closing invoice when a contract ends, for the current month so far. */
export function IssueOneForm({ tenants, defaultMonth, currentMonth }: { tenants: { id: string; name: string }[]; defaultMonth: string; currentMonth: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [errors, setErrors] = useState<{ message?: string; fields: Record<string, string> }>({ fields: {} });
  const [done, setDone] = useState<string>();
  const [closing, setClosing] = useState(false);
  const [month, setMonth] = useState(defaultMonth);
  const issue = useMutation(trpc.invoice.issue.mutationOptions());

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setErrors({ fields: {} });
    setDone(undefined);
    try {
      const { invoice } = await issue.mutateAsync({ orgId: formValue(form, 'orgId'), month: formValue(form, 'month'), closing });
      if (!invoice) setDone(t('invoice.issueOne.noUsage'));
      else setDone(t(invoice.created ? 'invoice.issueOne.issued' : 'invoice.issueOne.existing', { number: invoice.number }));
      router.refresh();
    } catch (e) {
      setErrors(formErrors(e, ['orgId', 'month']));
    }
  }

  if (tenants.length === 0) return <p className="text-sm text-slate-600">{t('invoice.issueOne.noTenants')}</p>;
  return (
    <form onSubmit={onSubmit} className="flex flex-wrap items-end gap-3" noValidate>
      <Field label={t('invoice.issueOne.tenant')} error={errors.fields.orgId} className="min-w-64">
        <select name="orgId" required defaultValue={tenants[0]?.id}>
          {tenants.map((tenant) => (
            <option key={tenant.id} value={tenant.id}>
              {tenant.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label={t('invoice.issueOne.month')} error={errors.fields.month}>
        <input name="month" type="month" required value={month} onChange={(e) => setMonth(e.target.value)} max={closing ? currentMonth : defaultMonth} min="2000-01" readOnly={closing} />
      </Field>
      <label className="flex w-full items-start gap-2 text-sm text-slate-700">
        <input
          type="checkbox"
          name="closing"
          checked={closing}
          onChange={(e) => {
            setClosing(e.target.checked);
            setMonth(e.target.checked ? currentMonth : defaultMonth);
          }}
          className="mt-0.5"
          aria-describedby="closing-hint"
        />
        <span>
          {t('invoice.issueOne.closing')}
          <span id="closing-hint" className="block text-xs text-slate-500">
            {t('invoice.issueOne.closingHint')}
          </span>
        </span>
      </label>
      <Button type="submit" disabled={issue.isPending}>
        {issue.isPending ? t('common.working') : t('invoice.issueOne.submit')}
      </Button>
      {errors.message && (
        <p role="alert" className="w-full text-sm text-red-700">
          {errors.message}
        </p>
      )}
      {done && (
        <p role="status" className="w-full text-sm text-emerald-800">
          {done}
        </p>
      )}
    </form>
  );
}
