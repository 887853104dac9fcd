'use client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { createTRPCClient, httpBatchLink } from '@trpc/client';
import { useState, type ReactNode } from 'react';
import superjson from 'superjson';
import type { AppRouter } from '~/server/api/root';
import type { Locale } from '~/server/i18n/core';
import { TRPCProvider } from '~/app/_lib/trpc';
import { I18nProvider } from './i18n';

export function Providers({ locale, catalogueUrl, timeZone, children }: { locale: Locale; catalogueUrl: string; timeZone: string; children: ReactNode }) {
  const [queryClient] = useState(
    () => new QueryClient({ defaultOptions: { queries: { staleTime: 5_000, retry: 1 }, mutations: { retry: false } } }),
  );
  const [trpcClient] = useState(() =>
    createTRPCClient<AppRouter>({ links: [httpBatchLink({ url: '/api/trpc', transformer: superjson, maxItems: 10 })] }),
  );
  return (
    <I18nProvider locale={locale} catalogueUrl={catalogueUrl} timeZone={timeZone}>
      <QueryClientProvider client={queryClient}>
        <TRPCProvider trpcClient={trpcClient} queryClient={queryClient}>
          {children}
        </TRPCProvider>
      </QueryClientProvider>
    </I18nProvider>
  );
}
