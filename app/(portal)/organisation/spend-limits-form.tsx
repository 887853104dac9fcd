'use client';
import { useMutation } from '@tanstack/react-query';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

/** One person's monthly limit on the company's credit lines: empty for none. */
function SpendLimitRow({ userId, name, monthlyCents }: { userId: string; name: string; monthlyCents: number | null }) {
  const { t } = useT();
  const trpc = useTRPC();
  const save = useMutation(trpc.organisation.setSpendLimit.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(save.mutateAsync, {
    read: (form) => {
      const value = formValue(form, 'monthlyEuros').trim();
      return { userId, monthlyEuros: value === '' ? null : Number(value) };
    },
    fields: ['monthlyEuros'],
  });
  return (
    <li className="py-3" data-testid="spend-limit">
      <form key={String(monthlyCents)} onSubmit={onSubmit} className="flex flex-wrap items-end gap-3" noValidate>
        <Field label={`${name} · ${t('budget.people.limit')}`} error={errors.fields.monthlyEuros} className="min-w-0 flex-1 basis-56">
          <input name="monthlyEuros" type="number" min={0} step={1} inputMode="numeric" defaultValue={monthlyCents === null ? '' : monthlyCents / 100} />
        </Field>
        <Button type="submit" variant="secondary" disabled={save.isPending}>
          {t('budget.people.save')}
        </Button>
      </form>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
      {done && <p className="mt-1 text-xs text-green-700">{t('budget.saved')}</p>}
    </li>
  );
}

/** Owners and managers of a company set each person's monthly limit on its credit lines. */
export function SpendLimitsForm({ people }: { people: { userId: string; name: string; monthlyCents: number | null }[] }) {
  const { t } = useT();
  return (
    <Card title={t('budget.people.title')}>
      <p className="text-sm text-slate-600">{t('budget.people.intro')}</p>
      <ul className="divide-y divide-slate-100">
        {people.map((p) => (
          <SpendLimitRow key={p.userId} {...p} />
        ))}
      </ul>
    </Card>
  );
}
