'use client';
// The what-if runs, newest first; while one is queued or running the list asks again every 2 s.
import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { useT } from '~/app/_components/i18n';
import { Badge, Card, Table, Td, Th } from '~/app/_components/ui';
import { useTRPC } from '~/app/_lib/trpc';
import { formatDateTime, formatDay, formatPercent } from '~/server/i18n/format';
import { describeChange } from './describe';

const TONE = { queued: 'slate', running: 'indigo', done: 'green', failed: 'red' } as const;

export function RunList() {
  const { t, locale, timeZone } = useT();
  const trpc = useTRPC();
  const runs = useQuery({
    ...trpc.whatIf.list.queryOptions(),
    // Runs change in the worker, not here: each visit asks again rather than showing a list from before.
    refetchOnMount: 'always',
    refetchInterval: (query) => (query.state.data?.some((r) => r.status === 'queued' || r.status === 'running') ? 2000 : false),
  });
  return (
    <Card title={t('whatIf.runs.heading')}>
      {!runs.data ? (
        <p className="text-sm text-slate-500">{t('common.working')}</p>
      ) : runs.data.length === 0 ? (
        <p className="text-sm text-slate-600">{t('whatIf.runs.none')}</p>
      ) : (
        <Table>
          <thead>
            <tr>
              <Th>{t('whatIf.runs.name')}</Th>
              <Th>{t('whatIf.runs.period')}</Th>
              <Th>{t('whatIf.runs.change')}</Th>
              <Th>{t('whatIf.runs.status')}</Th>
              <Th>{t('whatIf.runs.by')}</Th>
            </tr>
          </thead>
          <tbody>
            {runs.data.map((run) => (
              <tr key={run.id}>
                <Td>
                  <Link href={`/staff/what-if/${run.id}`} className="font-medium text-indigo-700 hover:underline">
                    {run.title}
                  </Link>
                </Td>
                <Td className="whitespace-nowrap">{`${formatDay(locale, run.fromDay)} – ${formatDay(locale, run.toDay)}`}</Td>
                <Td>{run.changes.map((c) => describeChange(t, locale, c)).join('; ')}</Td>
                <Td>
                  <Badge tone={TONE[run.status]}>{t(`whatIf.status.${run.status}`, { percent: formatPercent(locale, run.progressPermille / 1000) })}</Badge>
                  {run.status === 'running' && (
                    <progress className="ml-2 h-2 w-20 align-middle" max={1000} value={run.progressPermille} aria-label={t('whatIf.run.progress', { percent: formatPercent(locale, run.progressPermille / 1000) })} />
                  )}
                </Td>
                <Td className="whitespace-nowrap text-slate-600">{`${run.createdByName} · ${formatDateTime(locale, new Date(run.createdAt), timeZone)}`}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}
    </Card>
  );
}
