'use client';
// An interactive session's own card on its job page (issue #28): the app, its idle time-out, the
// Open button once the app answers, and Extend while it may run longer. Only the session's person sees it: to anyone else (the project's
// lead, a colleague) the session is not theirs to open, and session.get answers NOT_FOUND.
import { useQuery } from '@tanstack/react-query';
import { useT } from '~/app/_components/i18n';
import { Card } from '~/app/_components/ui';
import { useTRPC } from '~/app/_lib/trpc';
import { SessionExtend } from '../../apps/session-extend';

export function SessionPanel({ jobId }: { jobId: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const query = useQuery({ ...trpc.session.get.queryOptions({ jobId }), retry: false, refetchInterval: (q) => (q.state.data && (q.state.data.state === 'RUNNING' || q.state.data.state === 'PENDING' || q.state.data.state === 'SUBMITTING') ? 2000 : false) });
  const session = query.data;
  if (!session) return null;
  const running = session.state === 'RUNNING' && !session.cancelRequested;
  return (
    <Card title={t('sessions.cardTitle')}>
      <div className="flex flex-wrap items-center justify-between gap-4 text-sm" data-testid="session-panel">
        <p className="text-slate-700">
          {session.appName} · {t('sessions.idleAfter', { minutes: Math.round(session.idleTimeoutSeconds / 60) })}
        </p>
        {session.ready ? (
          <a href={session.url} target="_blank" rel="noopener" className="rounded-md bg-indigo-600 px-3 py-2 text-sm font-medium text-white hover:bg-indigo-700" data-testid="session-open">
            {t('sessions.open')}
          </a>
        ) : running ? (
          <span className="text-slate-500">{t('sessions.appStarting')}</span>
        ) : null}
      </div>
      <div className="mt-3">
        <SessionExtend session={session} />
      </div>
    </Card>
  );
}
