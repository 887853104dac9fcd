'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

/** Signs out one other session of the person. */
export function EndSession({ sessionId }: { sessionId: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const end = useMutation(trpc.account.endSession.mutationOptions());
  return (
    <Button variant="secondary" disabled={end.isPending} onClick={() => void end.mutateAsync({ sessionId }).then(() => router.refresh())}>
      {t('profile.endSession')}
    </Button>
  );
}

/** Signs out every session of the person but this one. */
export function EndOtherSessions() {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const end = useMutation(trpc.account.endOtherSessions.mutationOptions());
  const [done, setDone] = useState<number>();
  return (
    <div className="flex items-center gap-3">
      {done !== undefined && (
        <span role="status" className="text-sm text-slate-700">
          {t('profile.endedOthers', { count: done })}
        </span>
      )}
      <Button
        variant="secondary"
        disabled={end.isPending}
        onClick={() =>
          void end.mutateAsync().then((r) => {
            setDone(r.endedSessions);
            router.refresh();
          })
        }
      >
        {t('profile.endOthers')}
      </Button>
    </div>
  );
}

/** Changes the password (the current one is asked for); every other session is signed out. */
export function ChangePassword() {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const change = useMutation(trpc.account.changePassword.mutationOptions());
  const [errors, setErrors] = useState<{ fields: Record<string, string>; message?: string }>({ fields: {} });
  const [done, setDone] = useState<number>();

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const target = event.currentTarget;
    const form = new FormData(target);
    setErrors({ fields: {} });
    setDone(undefined);
    try {
      const result = await change.mutateAsync({ currentPassword: formValue(form, 'currentPassword'), newPassword: formValue(form, 'newPassword') });
      target.reset();
      setDone(result.endedSessions);
      router.refresh();
    } catch (e) {
      setErrors(formErrors(e, ['currentPassword', 'newPassword']));
    }
  }

  return (
    <Card title={t('profile.passwordTitle')}>
      <p className="mb-3 text-sm text-slate-600">{t('profile.passwordIntro')}</p>
      <form onSubmit={onSubmit} className="grid max-w-md gap-3" noValidate>
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        <Field label={t('profile.currentPassword')} error={errors.fields.currentPassword}>
          <input name="currentPassword" type="password" autoComplete="current-password" required />
        </Field>
        <Field label={t('profile.newPassword')} error={errors.fields.newPassword} hint={t('field.passwordHint', { min: 10 })}>
          <input name="newPassword" type="password" autoComplete="new-password" required minLength={10} />
        </Field>
        <div>
          <Button type="submit" disabled={change.isPending}>
            {change.isPending ? t('common.working') : t('profile.changePassword')}
          </Button>
        </div>
        {done !== undefined && (
          <p role="status" className="text-sm text-slate-700">
            {t('profile.passwordChanged', { count: done })}
          </p>
        )}
      </form>
    </Card>
  );
}
