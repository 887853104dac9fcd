import type { Metadata } from 'next';
import Link from 'next/link';
import { CapFigureItems } from '~/app/_components/cap-figures';
import { Badge, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { formatDateTime, formatEuros, formatGpuHours } from '~/server/i18n/format';
import { getT } from '~/app/_lib/i18n-server';
import { requireStaff } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { CreditRequestDecision } from './credit-request-decision';
import { OpenCallForm } from './open-call-form';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('review.queueTitle') };
}

/** The rounds a call's table shows: those that held applications, and the next three open ones; the rest are counted below it. */
function shownRounds<R extends { status: 'open' | 'closed'; applications: number }>(rounds: R[]): R[] {
  const nextOpen = rounds.filter((r) => r.status === 'open').slice(0, 3);
  return rounds.filter((r) => r.applications > 0 || nextOpen.includes(r));
}

export default async function ReviewQueuePage() {
  const me = await requireStaff();
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const [queue, creditRequests, calls, modes] = await Promise.all([caller.staff.applicationQueue(), caller.staff.creditRequestQueue(), caller.calls.list(), caller.catalogue.accessModes()]);
  const roundModes = modes.filter((m) => m.intake === 'rounds');
  const isAdmin = me.staffRoles.includes('admin');
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('review.queueTitle')}
        subtitle={t('review.queueSubtitle')}
        actions={
          <Link href="/staff/reports" className="text-sm font-medium text-indigo-700 hover:underline">
            {t('reports.link')}
          </Link>
        }
      />
      <Card>
        {queue.length === 0 ? (
          <p className="text-sm text-slate-600">{t('review.queueEmpty')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('review.project')}</Th>
                <Th>{t('staff.audit.tenant')}</Th>
                <Th>{t('application.mode')}</Th>
                <Th className="text-right">{t('application.requested')}</Th>
                <Th>{t('review.submitted')}</Th>
                <Th>{t('review.age')}</Th>
                <Th>{t('review.due')}</Th>
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {queue.map((a) => (
                <tr key={a.id} data-testid="queue-row">
                  <Td>
                    <Link href={`/staff/applications/${a.id}`} className="font-medium text-indigo-700 hover:underline">
                      {a.projectTitle}
                    </Link>
                    {a.kind !== 'new' && <span className="ml-2 text-xs text-slate-500">{t(`applicationKind.${a.kind}`)}</span>}
                    {a.roundCutoffAt && a.roundStatus === 'open' && (
                      <span className="mt-1 block">
                        <Badge tone="slate">{t('review.inRound', { cutoff: formatDateTime(locale, a.roundCutoffAt, timeZone) })}</Badge>
                      </span>
                    )}
                    {(a.reviews.assigned > 0 || a.reviews.mine) && (
                      <span className="mt-1 flex flex-wrap gap-1" data-testid="queue-reviews">
                        {a.reviews.mine === 'assigned' && <Badge tone="amber">{t('reviews.queueMine')}</Badge>}
                        {a.reviews.mine === 'scored' && <Badge tone="green">{t('reviews.queueMineDone')}</Badge>}
                        <Badge tone="slate">{t('reviews.queueCount', { scored: a.reviews.scored, assigned: a.reviews.assigned })}</Badge>
                      </span>
                    )}
                    {a.missingReportsOfPi > 0 && (
                      <span className="mt-1 block" data-testid="queue-missing-report">
                        <Badge tone="amber">{t('report.missingBadge', { count: a.missingReportsOfPi })}</Badge>
                      </span>
                    )}
                    {a.reviewReason === 'instantOnceActive' && (
                      <span className="mt-1 block">
                        <Badge tone="amber">{t('review.repeatInstant')}</Badge>
                      </span>
                    )}
                  </Td>
                  <Td>{a.orgName}</Td>
                  <Td>{a.modeName}</Td>
                  <Td className="text-right tabular-nums">{formatGpuHours(locale, a.requestedGpuSeconds)}</Td>
                  <Td className="whitespace-nowrap text-slate-600">{a.submittedAt ? formatDateTime(locale, a.submittedAt, timeZone) : ''}</Td>
                  <Td>
                    <Badge tone={a.overdue ? 'red' : a.ageWorkingDays >= a.targetDays - 1 ? 'amber' : 'green'}>{t('review.ageOfTarget', { age: a.ageWorkingDays, target: a.targetDays })}</Badge>
                  </Td>
                  <Td className="whitespace-nowrap" data-testid="queue-due">
                    <span className="text-slate-600">{formatDateTime(locale, a.dueAt, timeZone)}</span>
                    {a.due !== 'onTime' && (
                      <span className="ml-2">
                        <Badge tone={a.due === 'overdue' ? 'red' : 'amber'}>{t(a.due === 'overdue' ? 'review.dueOverdue' : 'review.dueToday')}</Badge>
                      </span>
                    )}
                  </Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
      {(roundModes.length > 0 || calls.length > 0) && (
        <Card title={t('calls.heading')}>
          <p className="mb-3 text-sm text-slate-600">{t('calls.subtitle')}</p>
          {calls.length === 0 ? (
            <p className="text-sm text-slate-600">{t('calls.none')}</p>
          ) : (
            <ul className="space-y-4">
              {calls.map((call) => (
                <li key={call.id} data-testid="call">
                  <p className="font-medium">
                    {call.title} <span className="text-sm font-normal text-slate-600">· {call.modeName} · {t('calls.perRound', { hours: formatGpuHours(locale, call.gpuSecondsPerRound) })}</span>
                  </p>
                  {call.description && <p className="text-sm text-slate-600">{call.description}</p>}
                  <Table>
                    <thead>
                      <tr>
                        <Th>{t('calls.cutoff')}</Th>
                        <Th>{t('calls.roundStatus')}</Th>
                        <Th className="text-right">{t('calls.applications')}</Th>
                        <Th>
                          <span className="sr-only">{t('calls.ranking')}</span>
                        </Th>
                      </tr>
                    </thead>
                    <tbody className="divide-y divide-slate-100">
                      {shownRounds(call.rounds).map((round) => (
                        <tr key={round.id} data-testid="call-round">
                          <Td className="whitespace-nowrap">{formatDateTime(locale, round.cutoffAt, timeZone)}</Td>
                          <Td>
                            <Badge tone={round.status === 'open' ? 'green' : 'slate'}>{t(round.status === 'open' ? 'calls.roundOpen' : 'calls.roundClosed')}</Badge>
                          </Td>
                          <Td className="text-right tabular-nums">{round.applications}</Td>
                          <Td>
                            {round.applications > 0 && (
                              <Link href={`/staff/rounds/${round.id}`} className="text-sm font-medium text-indigo-700 hover:underline">
                                {t('calls.ranking')}
                              </Link>
                            )}
                          </Td>
                        </tr>
                      ))}
                    </tbody>
                  </Table>
                  {call.rounds.length > shownRounds(call.rounds).length && (
                    <p className="mt-1 text-xs text-slate-500">{t('calls.moreRounds', { count: call.rounds.length - shownRounds(call.rounds).length })}</p>
                  )}
                </li>
              ))}
            </ul>
          )}
          {isAdmin && roundModes.length > 0 && (
            <div className="mt-6 border-t border-slate-100 pt-4">
              <h3 className="mb-3 text-sm font-semibold text-slate-800">{t('calls.open')}</h3>
              <OpenCallForm modes={roundModes.map((m) => ({ id: m.id, name: m.name }))} />
            </div>
          )}
        </Card>
      )}
      <Card title={t('review.creditTitle')}>
        {creditRequests.length === 0 ? (
          <p className="text-sm text-slate-600">{t('review.creditEmpty')}</p>
        ) : (
          <ul className="divide-y divide-slate-100">
            {creditRequests.map((r) => (
              <li key={r.id} className="grid gap-4 py-4 md:grid-cols-[1fr_22rem]" data-testid="credit-request-row">
                <div className="text-sm">
                  <p className="font-medium">
                    {r.orgName} — {r.projectTitle}
                  </p>
                  <dl className="mt-2 grid grid-cols-2 gap-2 sm:grid-cols-4">
                    <div>
                      <dt className="text-slate-500">{t('review.creditTenant')}</dt>
                      <dd>
                        <Link href={`/staff/tenants/${r.orgId}`} className="text-indigo-700 hover:underline">
                          {r.orgName}
                        </Link>{' '}
                        <span className="text-slate-500">
                          ({t(`kind.${r.orgKind}`)}, {r.orgCountry})
                        </span>
                      </dd>
                    </div>
                    <div>
                      <dt className="text-slate-500">{t('review.creditCurrent')}</dt>
                      <dd className="tabular-nums">{formatEuros(locale, r.currentCents)}</dd>
                    </div>
                    <div>
                      <dt className="text-slate-500">{t('review.creditRequested')}</dt>
                      <dd className="font-medium tabular-nums">{formatEuros(locale, r.requestedCents)}</dd>
                    </div>
                    {r.lineCents !== r.currentCents && (
                      <div>
                        <dt className="text-slate-500">{t('review.creditLineNow')}</dt>
                        <dd className="tabular-nums">{formatEuros(locale, r.lineCents)}</dd>
                      </div>
                    )}
                    <CapFigureItems figures={r} t={t} locale={locale} />
                    <div>
                      <dt className="text-slate-500">{t('review.creditRequestedBy')}</dt>
                      <dd>{r.requestedByName}</dd>
                    </div>
                    <div>
                      <dt className="text-slate-500">{t('review.submitted')}</dt>
                      <dd>{formatDateTime(locale, r.createdAt, timeZone)}</dd>
                    </div>
                  </dl>
                  <p className="mt-2 text-slate-700">
                    <span className="text-slate-500">{t('common.reason')}: </span>
                    {r.reason}
                  </p>
                </div>
                {isAdmin ? (
                  <CreditRequestDecision figures={{ requestId: r.id, orgName: r.orgName, requestedCents: r.requestedCents, lineCents: r.lineCents, capCents: r.capCents }} />
                ) : (
                  <p className="text-sm text-slate-600">{t('review.creditAdminsOnly')}</p>
                )}
              </li>
            ))}
          </ul>
        )}
      </Card>
    </div>
  );
}
