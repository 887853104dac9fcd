'use client';
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';

export function ForgotPasswordForm({ defaultEmail }: { defaultEmail: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const request = useMutation(trpc.account.requestPasswordReset.mutationOptions());
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  // The answer names the address asked for, never whether it has an account.
  const [sentTo, setSentTo] = useState<string>();

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const email = formValue(new FormData(event.currentTarget), 'email');
    setErrors({ fields: {} });
    setSentTo(undefined);
    try {
      await request.mutateAsync({ email });
      setSentTo(email.trim());
    } catch (error) {
      setErrors(formErrors(error, ['email']));
    }
  }

  return (
    <Card>
      <h1 className="text-xl font-semibold">{t('forgot.title')}</h1>
      <p className="mt-1 mb-6 text-sm text-slate-600">{t('forgot.intro')}</p>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {sentTo && <Alert tone="success">{t('forgot.sent', { email: sentTo })}</Alert>}
        <Field label={t('field.email')} error={errors.fields.email}>
          <input name="email" type="email" autoComplete="email" required defaultValue={defaultEmail} autoFocus />
        </Field>
        <Button type="submit" disabled={request.isPending} className="w-full">
          {request.isPending ? t('common.working') : t('forgot.submit')}
        </Button>
      </form>
      <p className="mt-6 text-sm text-slate-600">
        <Link href="/sign-in" className="font-medium text-indigo-700 hover:underline">
          {t('forgot.backToSignIn')}
        </Link>
      </p>
    </Card>
  );
}
