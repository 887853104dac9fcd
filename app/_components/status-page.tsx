import Link from 'next/link';
import type { ReactNode } from 'react';

/** A friendly full-page message (403, 404, errors) with a way back. */
export function StatusPage({ code, title, body, action }: { code: string; title: string; body: string; action: ReactNode }) {
  return (
    <main id="main" className="mx-auto flex min-h-[70vh] max-w-xl flex-col items-center justify-center px-4 text-center">
      <p className="text-sm font-semibold text-indigo-700">{code}</p>
      <h1 className="mt-2 text-3xl font-semibold tracking-tight">{title}</h1>
      <p className="mt-4 text-slate-600">{body}</p>
      <div className="mt-8">{action}</div>
    </main>
  );
}

export function HomeLink({ label }: { label: string }) {
  return (
    <Link href="/dashboard" className="rounded-md bg-indigo-600 px-4 py-2 text-sm font-medium text-white hover:bg-indigo-700">
      {label}
    </Link>
  );
}
