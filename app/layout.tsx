import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Providers } from '~/app/_components/providers';
import { getT } from '~/app/_lib/i18n-server';
import '~/server/i18n';
import { catalogueUrl } from '~/server/i18n/catalogue-file';
import { preload } from 'react-dom';
import './globals.css';

export const dynamic = 'force-dynamic';

export async function generateMetadata(): Promise<Metadata> {
  const { t } = await getT();
  return { title: { default: t('app.name'), template: `%s · ${t('app.name')}` }, description: t('app.tagline') };
}

export default async function RootLayout({ children }: { children: ReactNode }) {
  const { locale, timeZone } = await getT();
  const catalogue = catalogueUrl(locale);
  // Fetched at once, beside the page's scripts (client components need it to hydrate); the same request as
  // app/_components/i18n.tsx's fetch, so the browser answers that from this one.
  preload(catalogue, { as: 'fetch', crossOrigin: 'anonymous' });
  return (
    <html lang={locale}>
      <body className="min-h-screen">
        <Providers locale={locale} catalogueUrl={catalogue} timeZone={timeZone}>
          {children}
        </Providers>
      </body>
    </html>
  );
}
