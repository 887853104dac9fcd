// An application's review panel for staff (issue #32): the rubric, every review with its scores, comment
// and internal note; the viewer's own review to score or decline; a conflict to declare; for admins,
// reviewers to assign and conflicts of interest to override, with the log of both.
import { criterionName } from '~/app/_components/applicant-reviews';
import { Badge, Card, Table, Td, Th } from '~/app/_components/ui';
import { formatDateTime } from '~/server/i18n/format';
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import type { RouterOutputs } from '~/app/_lib/types';
import { AssignReviewerForm, DeclareConflictForm, DeclineForm, OverrideConflictForm, ReviewForm } from './review-forms';

type Panel = RouterOutputs['reviews']['ofApplication'];

/** The mean of a review's scores, two decimals. */
function meanOf(scores: Record<string, number>, locale: Locale): string {
  const values = Object.values(scores);
  return values.length ? (values.reduce((a, b) => a + b, 0) / values.length).toLocaleString(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 }) : '—';
}

export function ReviewPanel({ panel, isAdmin, viewerId, t, locale, timeZone }: { panel: Panel; isAdmin: boolean; viewerId: string; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale; timeZone: string }) {
  const open = panel.status === 'submitted';
  const conflictText = (reason: 'organisation' | 'project' | 'declared' | null) => (reason ? t(`reviews.conflict.${reason}`) : '');
  const excluded = panel.staff.filter((s) => s.excluded);
  const overridden = panel.staff.filter((s) => s.overridden);
  return (
    <Card title={t('reviews.heading')}>
      <p className="mb-3 text-sm text-slate-600">{t('reviews.rubric', { criteria: panel.rubric.map((c) => criterionName(locale, c)).join(', ') })}</p>
      {panel.reviews.length === 0 ? (
        <p className="text-sm text-slate-600">{t('reviews.none')}</p>
      ) : (
        <Table>
          <thead>
            <tr>
              <Th>{t('reviews.reviewer')}</Th>
              <Th>{t('reviews.state')}</Th>
              {panel.rubric.map((c) => (
                <Th key={c.id} className="text-right">
                  {criterionName(locale, c)}
                </Th>
              ))}
              <Th className="text-right">{t('reviews.mean')}</Th>
              <Th>{t('reviews.commentToApplicant')}</Th>
              <Th>{t('reviews.internalNote')}</Th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {panel.reviews.map((r) => (
              <tr key={r.id} data-testid="panel-review">
                <Td className="whitespace-nowrap">{r.reviewerName}</Td>
                <Td>
                  <Badge tone={r.status === 'scored' ? 'green' : r.status === 'declined' ? 'slate' : 'amber'}>{t(`reviews.status.${r.status}`)}</Badge>
                  {r.scoredAt && <span className="mt-1 block text-xs text-slate-500">{formatDateTime(locale, r.scoredAt, timeZone)}</span>}
                </Td>
                {panel.rubric.map((c) => (
                  <Td key={c.id} className="text-right tabular-nums">
                    {r.scores?.[c.id] ?? '—'}
                  </Td>
                ))}
                <Td className="text-right font-medium tabular-nums">{r.scores ? meanOf(r.scores, locale) : '—'}</Td>
                <Td className="max-w-xs text-sm whitespace-pre-line">{r.status === 'declined' ? <span className="text-slate-500">{r.declineReason}</span> : r.commentToApplicant}</Td>
                <Td className="max-w-xs text-sm whitespace-pre-line text-slate-600">{r.internalNote}</Td>
              </tr>
            ))}
          </tbody>
        </Table>
      )}

      {open && panel.mine && panel.mine.status !== 'declined' && (
        <section className="mt-6 border-t border-slate-100 pt-4" aria-labelledby="my-review">
          <h3 id="my-review" className="mb-3 text-sm font-semibold text-slate-800">
            {t('reviews.yours')}
          </h3>
          <ReviewForm applicationId={panel.applicationId} rubric={panel.rubric} mine={panel.mine} />
          {panel.mine.status === 'assigned' && (
            <div className="mt-4 max-w-md">
              <DeclineForm applicationId={panel.applicationId} />
            </div>
          )}
        </section>
      )}
      {panel.mine?.status === 'declined' && <p className="mt-4 text-sm text-slate-600">{t('reviews.declinedByYou')}</p>}

      {isAdmin && open && (
        <section className="mt-6 border-t border-slate-100 pt-4">
          <AssignReviewerForm applicationId={panel.applicationId} candidates={panel.staff.filter((s) => !s.assigned && !s.excluded)} />
        </section>
      )}

      <section className="mt-6 border-t border-slate-100 pt-4" aria-labelledby="conflicts">
        <h3 id="conflicts" className="mb-2 text-sm font-semibold text-slate-800">
          {t('reviews.conflicts')}
        </h3>
        {excluded.length === 0 && overridden.length === 0 ? (
          <p className="text-sm text-slate-600">{t('reviews.noConflicts')}</p>
        ) : (
          <ul className="space-y-1 text-sm" data-testid="conflicts">
            {[...excluded, ...overridden].map((s) => (
              <li key={s.userId}>
                <span className="font-medium">{s.name}</span> — {conflictText(s.conflict)} <Badge tone={s.excluded ? 'red' : 'amber'}>{s.excluded ? t('reviews.excluded') : t('reviews.overridden')}</Badge>
              </li>
            ))}
          </ul>
        )}
        {panel.conflictLog.length > 0 && (
          <ul className="mt-2 space-y-1 text-xs text-slate-600">
            {panel.conflictLog.map((entry, i) => (
              <li key={i}>
                {formatDateTime(locale, entry.at, timeZone)} · {t('reviews.logEntry', { kind: t(`reviews.kind.${entry.kind}`), name: entry.reviewerName, by: entry.byName, reason: entry.reason })}
              </li>
            ))}
          </ul>
        )}
        {isAdmin && open && (
          <div className="mt-4">
            <OverrideConflictForm applicationId={panel.applicationId} excluded={excluded.filter((s) => s.userId !== viewerId).map((s) => ({ userId: s.userId, name: s.name, reason: conflictText(s.conflict) }))} />
          </div>
        )}
        {open && (
          <div className="mt-4 max-w-md">
            <DeclareConflictForm applicationId={panel.applicationId} />
          </div>
        )}
      </section>
    </Card>
  );
}
