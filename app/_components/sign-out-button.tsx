'use client';
import { signOut } from 'next-auth/react';
import { useT } from './i18n';
import { Button } from './ui';

export function SignOutButton() {
  const { t } = useT();
  return (
    <Button variant="secondary" onClick={() => void signOut({ callbackUrl: '/sign-in' })}>
      {t('nav.signOut')}
    </Button>
  );
}
