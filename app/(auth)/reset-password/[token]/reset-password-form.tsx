'use client';
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

const SHOWN = ['password', 'passwordConfirm'];

export function ResetPasswordForm({ token }: { token: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const reset = useMutation(trpc.account.resetPassword.mutationOptions());
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [gone, setGone] = useState(false);

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setErrors({ fields: {} });
    try {
      const { email } = await reset.mutateAsync({ token, password: formValue(form, 'password'), passwordConfirm: formValue(form, 'passwordConfirm') });
      // Every session ended with the reset, this browser's too: sign in with the new password.
      router.replace(`/sign-in?reset=done&email=${encodeURIComponent(email)}`);
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, SHOWN));
      // Used in another tab, or replaced by a newer link, while this page was open.
      setGone((error as { data?: { code?: string } }).data?.code === 'NOT_FOUND');
    }
  }

  return (
    <Card>
      <h1 className="text-xl font-semibold">{t('reset.title')}</h1>
      <p className="mt-1 mb-6 text-sm text-slate-600">{t('reset.intro')}</p>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {errors.message && (
          <Alert tone="error">
            {errors.message}{' '}
            {gone && (
              <Link href="/forgot-password" className="font-medium text-indigo-700 hover:underline">
                {t('reset.askAgain')}
              </Link>
            )}
          </Alert>
        )}
        <Field label={t('reset.newPassword')} error={errors.fields.password} hint={t('field.passwordHint', { min: 10 })}>
          <input name="password" type="password" autoComplete="new-password" required minLength={10} autoFocus />
        </Field>
        <Field label={t('reset.confirmPassword')} error={errors.fields.passwordConfirm}>
          <input name="passwordConfirm" type="password" autoComplete="new-password" required minLength={10} />
        </Field>
        <Button type="submit" disabled={reset.isPending} className="w-full">
          {reset.isPending ? t('common.working') : t('reset.submit')}
        </Button>
      </form>
    </Card>
  );
}
