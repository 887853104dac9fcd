'use client';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { signIn } from 'next-auth/react';
import { useState } from 'react';
import { formValue } from '~/app/_lib/form-value';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';

export function SignInForm({ callbackUrl, defaultEmail, showDemoHint, passwordReset = false }: { callbackUrl: string; defaultEmail: string; showDemoHint: boolean; passwordReset?: boolean }) {
  const { t } = useT();
  const router = useRouter();
  const [error, setError] = useState<string>();
  const [pending, setPending] = useState(false);

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(undefined);
    const result = await signIn('credentials', {
      email: formValue(form, 'email'),
      password: formValue(form, 'password'),
      redirect: false,
    });
    setPending(false);
    const locked = /^RateLimited:(\d+)$/.exec(result?.error ?? '');
    if (locked) {
      setError(t('signIn.lockedOut', { minutes: Math.max(1, Math.ceil(Number(locked[1]) / 60)) }));
      return;
    }
    if (!result || result.error) {
      setError(t('signIn.wrongCredentials'));
      return;
    }
    router.replace(callbackUrl);
    router.refresh();
  }

  return (
    <Card>
      <h1 className="mb-6 text-xl font-semibold">{t('signIn.title')}</h1>
      <form onSubmit={onSubmit} className="space-y-4" noValidate>
        {error && <Alert tone="error">{error}</Alert>}
        {passwordReset && !error && <Alert tone="success">{t('signIn.passwordReset')}</Alert>}
        <Field label={t('field.email')}>
          <input name="email" type="email" autoComplete="email" required defaultValue={defaultEmail} autoFocus={!defaultEmail} />
        </Field>
        <Field label={t('field.password')}>
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
