'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formatEuros } from '~/server/i18n/format';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

/** A company owner caps what the organisation may spend in a calendar month. */
export function MonthlyCapForm({ capCents }: { capCents: number | null }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [done, setDone] = useState(false);
  const save = useMutation(trpc.allocation.setMonthlyCap.mutationOptions());
  async function submit(capEuros: number | null) {
    setErrors({ fields: {} });
    setDone(false);
    try {
      await save.mutateAsync({ capEuros });
      setDone(true);
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, ['capEuros']));
    }
  }
  return (
    <Card title={t('cap.title')}>
      <p className="mb-4 text-sm text-slate-600">
        {t('cap.intro')} {capCents === null ? t('cap.none') : t('cap.current', { cap: formatEuros(locale, capCents) })}
      </p>
      <form
        className="flex flex-wrap items-start gap-4"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void submit(Number(formValue(new FormData(e.currentTarget), 'capEuros')));
        }}
      >
        <Field label={t('cap.amount')} error={errors.fields.capEuros} className="w-48">
          <input name="capEuros" type="number" min={1} step={1} defaultValue={capCents === null ? '' : capCents / 100} required />
        </Field>
        <Button type="submit" disabled={save.isPending} className="sm:mt-6">
          {t('cap.submit')}
        </Button>
        {capCents !== null && (
          <Button variant="secondary" disabled={save.isPending} className="sm:mt-6" onClick={() => void submit(null)}>
            {t('cap.remove')}
          </Button>
        )}
      </form>
      <div className="mt-3">
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {done && <Alert tone="success">{t('cap.done')}</Alert>}
      </div>
    </Card>
  );
}
