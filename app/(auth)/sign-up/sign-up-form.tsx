'use client';
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { signIn } from 'next-auth/react';
import { useState } from 'react';
import { CountryOptions } from '~/app/_components/country-options';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';

const SHOWN = ['name', 'email', 'password', 'organisation.name', 'organisation.kind', 'organisation.country', 'organisation.residency'];

export function SignUpForm({ countries, invited }: { countries: readonly string[]; invited?: { token: string; email: string; orgName: string } }) {
  const { t } = useT();
  const router = useRouter();
  const trpc = useTRPC();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  // Sign-up answers alike for a known e-mail; only signing in tells whether the password was that account's.
  const [notSignedIn, setNotSignedIn] = useState(false);
  const signUp = useMutation(trpc.account.signUp.mutationOptions());

  async function onSubmit(event: React.FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const value = (name: string) => formValue(form, name);
    setErrors({ fields: {} });
    setNotSignedIn(false);
    try {
      await signUp.mutateAsync({
        name: value('name'),
        email: value('email'),
        password: value('password'),
        ...(invited
          ? { invitationToken: invited.token }
          : {
              organisation: {
                name: value('orgName'),
                kind: value('kind') as 'academic' | 'company',
                country: value('country'),
                residency: value('residency') as 'any' | 'EU' | 'DE',
              },
            }),
      });
    } catch (error) {
      setErrors(formErrors(error, SHOWN));
      return;
    }
    const result = await signIn('credentials', { email: value('email'), password: value('password'), redirect: false });
    if (result?.error) {
      setNotSignedIn(true);
      return;
    }
    router.replace(invited ? '/organisation' : '/dashboard');
    router.refresh();
  }

  const fe = errors.fields;
  return (
    <Card>
      <h1 className="text-xl font-semibold">{t('signUp.title')}</h1>
      <p className="mt-1 mb-6 text-sm text-slate-600">{invited ? t('signUp.invitedIntro', { org: invited.orgName }) : t('signUp.intro')}</p>
      <form onSubmit={onSubmit} className="space-y-5" noValidate>
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
        {notSignedIn && (
          <Alert tone="info">
            {t('signUp.notSignedIn')}{' '}
            <Link href="/sign-in" className="font-medium text-indigo-700 hover:underline">
              {t('nav.signIn')}
            </Link>
          </Alert>
        )}
        <fieldset className="space-y-4">
          <legend className="mb-2 text-sm font-semibold text-slate-700">{t('signUp.personSection')}</legend>
          <Field label={t('field.name')} error={fe.name}>
            <input name="name" autoComplete="name" required maxLength={120} />
          </Field>
          <Field label={t('field.email')} error={fe.email}>
            <input name="email" type="email" autoComplete="email" required defaultValue={invited?.email} readOnly={Boolean(invited)} />
          </Field>
          <Field label={t('field.password')} error={fe.password} hint={t('field.passwordHint', { min: 10 })}>
            <input name="password" type="password" autoComplete="new-password" required minLength={10} />
          </Field>
        </fieldset>
        {!invited && (
          <fieldset className="space-y-4">
            <legend className="mb-2 text-sm font-semibold text-slate-700">{t('signUp.orgSection')}</legend>
            <Field label={t('field.orgName')} error={fe['organisation.name']}>
              <input name="orgName" autoComplete="organization" required maxLength={120} />
            </Field>
            <Field label={t('field.orgKind')} error={fe['organisation.kind']}>
              <select name="kind" defaultValue="academic">
                <option value="academic">{t('kind.academic')}</option>
                <option value="company">{t('kind.company')}</option>
              </select>
            </Field>
            <Field label={t('field.country')} error={fe['organisation.country']}>
              <select name="country" defaultValue="DE">
                <CountryOptions countries={countries} />
              </select>
            </Field>
            <Field label={t('field.residency')} error={fe['organisation.residency']}>
              <select name="residency" defaultValue="any">
                <option value="any">{t('residency.any')}</option>
                <option value="EU">{t('residency.EU')}</option>
                <option value="DE">{t('residency.DE')}</option>
              </select>
            </Field>
          </fieldset>
        )}
        <Button type="submit" disabled={signUp.isPending} className="w-full">
          {signUp.isPending ? t('common.working') : t('signUp.submit')}
        </Button>
      </form>
      <p className="mt-6 text-sm text-slate-600">
        {t('signUp.haveAccount')}{' '}
        <Link href={invited ? `/sign-in?callbackUrl=/invitations/${invited.token}` : '/sign-in'} className="font-medium text-indigo-700 hover:underline">
          {t('nav.signIn')}
        </Link>
      </p>
    </Card>
  );
}
