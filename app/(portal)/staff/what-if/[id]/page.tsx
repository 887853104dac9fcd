// One what-if run: its progress while the worker replays it, then the current machine and the
// proposal side by side, per resource class, and each affected site's facility power against its cap.
import type { Metadata } from 'next';
import { notFound } from 'next/navigation';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { RunView } from './run-view';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('whatIf.title') };
}

export default async function WhatIfRunPage({ params }: { params: Promise<{ id: string }> }) {
  await requireStaff();
  const { id } = await params;
  if (!/^[0-9a-f-]{36}$/i.test(id)) notFound();
  return <RunView id={id} />;
}
