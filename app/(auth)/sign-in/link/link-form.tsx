'use client';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { signIn } from 'next-auth/react';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { signInErrorMessage } from '../sign-in-errors';

/** Asks for the existing account's password; the right one links the provider identity and signs in. */
export function LinkForm({ token, email, providerName, callbackUrl }: { token: string; email: string; providerName: string; callbackUrl: string }) {
  const { t } = useT();
  const router = useRouter();
  const [error, setError] = useState<string>();
  const [pending, setPending] = useState(false);

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const target = event.currentTarget;
    setPending(true);
    setError(undefined);
    const result = await signIn('sso-link', { token, password: formValue(new FormData(target), 'password'), redirect: false });
    setPending(false);
    if (!result || result.error) {
      const found = signInErrorMessage(result?.error ?? 'WrongPassword');
      setError(found ? t(...found) : undefined);
      target.reset();
      return;
    }
    router.replace(callbackUrl);
    router.refresh();
  }

  return (
    <form onSubmit={onSubmit} className="space-y-4" noValidate>
      <p className="text-sm text-slate-700">{t('link.body', { email, provider: providerName })}</p>
      {error && <Alert tone="error">{error}</Alert>}
      <input type="hidden" name="username" autoComplete="username" value={email} readOnly />
      <Field label={t('field.password')}>
        <input name="password" type="password" autoComplete="current-password" required autoFocus />
      </Field>
      <div className="flex items-center gap-3">
        <Button type="submit" disabled={pending}>
          {pending ? t('common.working') : t('link.submit')}
        </Button>
        <Link href="/sign-in" className="text-sm font-medium text-indigo-700 hover:underline">
          {t('link.cancel')}
        </Link>
      </div>
    </form>
  );
}
