import type { Metadata } from 'next';
import type { ReactNode } from 'react';
import { Providers } from '~/app/_components/providers';
import { getT } from '~/app/_lib/i18n-server';
import { messagesFor } from '~/server/i18n';
import './globals.css';

export const dynamic = 'force-dynamic';

export async function generateMetadata(): Promise<Metadata> {
  const { t } = await getT();
  return { title: { default: t('app.name'), template: `%s · ${t('app.name')}` }, description: t('app.tagline') };
}

export default async function RootLayout({ children }: { children: ReactNode }) {
  const { locale, timeZone } = await getT();
  return (
    <html lang={locale}>
      <body className="min-h-screen">
        <Providers locale={locale} messages={messagesFor(locale)} timeZone={timeZone}>
          {children}
        </Providers>
      </body>
    </html>
  );
}
