'use client';
import { signIn } from 'next-auth/react';
import { useState } from 'react';
import { useT } from '~/app/_components/i18n';
import { Button } from '~/app/_components/ui';
import { useHydrated } from '~/app/_lib/use-hydrated';
import type { SsoProviderRef } from '~/server/auth/sso-providers';

/** One "Sign in with …" button per configured identity provider; back to `callbackUrl` afterwards. */
export function SsoButtons({ providers, callbackUrl }: { providers: SsoProviderRef[]; callbackUrl: string }) {
  const { t } = useT();
  const [pending, setPending] = useState<string>();
  // A click on the server's HTML, before React attached the handler, would do nothing (CI's sso.spec saw it).
  const hydrated = useHydrated();
  if (providers.length === 0) return null;
  return (
    <div className="space-y-2">
      {providers.map((p) => (
        <Button
          key={p.id}
          variant="secondary"
          className="w-full"
          disabled={!hydrated || pending !== undefined}
          onClick={() => {
            setPending(p.id);
            void signIn(p.id, { callbackUrl });
          }}
        >
          {pending === p.id ? t('common.working') : t('signIn.with', { provider: p.name })}
        </Button>
      ))}
    </div>
  );
}
