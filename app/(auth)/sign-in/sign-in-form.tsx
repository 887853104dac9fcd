'use client';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { signIn } from 'next-auth/react';
import { useState } from 'react';
import { formValue } from '~/app/_lib/form-value';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import type { SsoProviderRef } from '~/server/auth/sso-providers';
import { signInErrorMessage } from './sign-in-errors';
import { SsoButtons } from './sso-buttons';

export function SignInForm({
  callbackUrl,
  defaultEmail,
  showDemoHint,
  passwordReset = false,
  providers,
  initialError,
}: {
  callbackUrl: string;
  defaultEmail: string;
  showDemoHint: boolean;
  /** Back from a password reset: say the new password is set. */
  passwordReset?: boolean;
  providers: SsoProviderRef[];
  /** The error a redirect brought back (`?error=`), e.g. from a provider's sign-in. */
  initialError?: string;
}) {
  const { t } = useT();
  const router = useRouter();
  const message = (code: string | undefined) => {
    const found = signInErrorMessage(code);
    return found ? t(...found) : undefined;
  };
  const [error, setError] = useState<string | undefined>(() => message(initialError));
  const [pending, setPending] = useState(false);
  const [missing, setMissing] = useState<{ email?: string; password?: string }>({});

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const email = formValue(form, 'email').trim();
    const password = formValue(form, 'password');
    setError(undefined);
    // An empty field is not a wrong password: say which field to fill in, without asking the server.
    const empty = { email: email ? undefined : t('signIn.emailRequired'), password: password ? undefined : t('signIn.passwordRequired') };
    setMissing(empty);
    if (empty.email || empty.password) return;
    setPending(true);
    const result = await signIn('credentials', { email, password, redirect: false });
    setPending(false);
    if (!result || result.error) {
      setError(message(result?.error ?? 'CredentialsSignin'));
      return;
    }
    router.replace(callbackUrl);
    router.refresh();
  }

  return (
    <Card>
      <h1 className="mb-6 text-xl font-semibold">{t('signIn.title')}</h1>
      {error && (
        <div className="mb-4">
          <Alert tone="error">{error}</Alert>
        </div>
      )}
      {providers.length > 0 && (
        <div className="mb-6 space-y-4">
          <SsoButtons providers={providers} callbackUrl={callbackUrl} />
          <p className="text-center text-sm text-slate-600">{t('signIn.orWithPassword')}</p>
        </div>
      )}
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {passwordReset && !error && <Alert tone="success">{t('signIn.passwordReset')}</Alert>}
        <Field label={t('field.email')} error={missing.email}>
          <input name="email" type="email" autoComplete="email" required defaultValue={defaultEmail} autoFocus={!defaultEmail} />
        </Field>
        <Field label={t('field.password')} error={missing.password}>
          <input name="password" type="password" autoComplete="current-password" required autoFocus={Boolean(defaultEmail)} />
        </Field>
        <p className="-mt-2 text-right text-sm">
          <Link href="/forgot-password" className="text-indigo-700 hover:underline">
            {t('signIn.forgotPassword')}
          </Link>
        </p>
        <Button type="submit" disabled={pending} className="w-full">
          {pending ? t('common.working') : t('signIn.submit')}
        </Button>
      </form>
      <p className="mt-6 text-sm text-slate-600">
        {t('signIn.noAccount')}{' '}
        <Link href={`/sign-up${callbackUrl.startsWith('/invitations/') ? `?invitation=${callbackUrl.split('/')[2]}` : ''}`} className="font-medium text-indigo-700 hover:underline">
          {t('nav.signUp')}
        </Link>
      </p>
      {showDemoHint && <p className="mt-2 text-xs text-slate-500">{t('signIn.demoHint')}</p>}
    </Card>
  );
}
