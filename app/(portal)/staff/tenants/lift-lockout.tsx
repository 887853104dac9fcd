'use client';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

/** Lets an admin end a person's sign-in lockout (too many wrong passwords) at once; audited with the reason. */
export function LiftLockout() {
  const { t } = useT();
  const trpc = useTRPC();
  const lift = useMutation(trpc.staff.liftSignInLockout.mutationOptions());
  const [errors, setErrors] = useState<{ fields: Record<string, string>; message?: string }>({ fields: {} });
  const [done, setDone] = useState<{ email: string; wasLocked: boolean }>();

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const email = formValue(form, 'email');
    setErrors({ fields: {} });
    setDone(undefined);
    try {
      const result = await lift.mutateAsync({ email, reason: formValue(form, 'reason') });
      setDone({ email, wasLocked: result.wasLocked });
    } catch (e) {
      setErrors(formErrors(e, ['email', 'reason']));
    }
  }

  return (
    <Card title={t('staff.lockout.title')}>
      <p className="mb-3 text-sm text-slate-600">{t('staff.lockout.intro')}</p>
      <form onSubmit={onSubmit} className="grid gap-3 sm:grid-cols-[1fr_2fr_auto] sm:items-end" noValidate>
        <Field label={t('field.email')} error={errors.fields.email}>
          <input name="email" type="email" required autoComplete="off" />
        </Field>
        <Field label={t('common.reason')} error={errors.fields.reason}>
          <input name="reason" required maxLength={1000} />
        </Field>
        <Button type="submit" disabled={lift.isPending}>
          {lift.isPending ? t('common.working') : t('staff.lockout.submit')}
        </Button>
      </form>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
      {done && <p className="mt-3 text-sm text-slate-700" role="status">{t(done.wasLocked ? 'staff.lockout.lifted' : 'staff.lockout.notLocked', { email: done.email })}</p>}
    </Card>
  );
}
