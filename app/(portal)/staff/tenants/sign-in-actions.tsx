'use client';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

/**
 * Lets an admin act on one person's sign-in: lift a lockout (too many wrong passwords) or end all their
 * sessions (a lost laptop, a leaver). Both are audited with the reason.
 */
export function SignInActions() {
  const { t } = useT();
  const trpc = useTRPC();
  const lift = useMutation(trpc.staff.liftSignInLockout.mutationOptions());
  const end = useMutation(trpc.staff.endSessions.mutationOptions());
  const [errors, setErrors] = useState<{ fields: Record<string, string>; message?: string }>({ fields: {} });
  const [done, setDone] = useState<string>();

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const email = formValue(form, 'email');
    const reason = formValue(form, 'reason');
    const action = (event.nativeEvent as SubmitEvent).submitter?.getAttribute('value');
    setErrors({ fields: {} });
    setDone(undefined);
    try {
      if (action === 'end') {
        const result = await end.mutateAsync({ email, reason });
        setDone(t('staff.sessions.ended', { count: result.endedSessions, email }));
      } else {
        const result = await lift.mutateAsync({ email, reason });
        setDone(t(result.wasLocked ? 'staff.lockout.lifted' : 'staff.lockout.notLocked', { email }));
      }
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
        <div className="flex flex-wrap gap-2">
          <Button type="submit" value="lift" disabled={lift.isPending || end.isPending}>
            {t('staff.lockout.submit')}
          </Button>
          <Button type="submit" value="end" variant="danger" disabled={lift.isPending || end.isPending}>
            {t('staff.sessions.submit')}
          </Button>
        </div>
      </form>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
      {done && (
        <p className="mt-3 text-sm text-slate-700" role="status">
          {done}
        </p>
      )}
    </Card>
  );
}
