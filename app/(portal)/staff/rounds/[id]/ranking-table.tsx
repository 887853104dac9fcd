'use client';
// A round's ranking table with the cut line (issue #32): staff select applications (those above the line
// that wait are selected at first) and decide them in one action, each decided on its own; and the
// admins' form that puts a reviewer on the round's panel.
import { useMutation } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { Fragment, useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Badge, Button, cx, Table, Td, Th } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import type { RouterOutputs } from '~/app/_lib/types';
import { OutcomePicker, StaffSelect, type Outcome } from '../../applications/[id]/decision-parts';
import { useFormMutation } from '~/app/_lib/use-form-mutation';
import { formatGpuHours } from '~/server/i18n/format';

type Ranking = RouterOutputs['reviews']['ranking'];

const STATUS_TONE = { submitted: 'amber', approved: 'green', rejected: 'red', changes_requested: 'slate' } as const;

export function RankingTable({ ranking, canDecide }: { ranking: Ranking; canDecide: boolean }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const decidable = ranking.rows.filter((r) => r.status === 'submitted' && r.applicationId);
  const [selected, setSelected] = useState<Set<string>>(() => new Set(decidable.filter((r) => r.aboveLine && r.scoreHundredths !== null).map((r) => r.applicationId!)));
  const [outcome, setOutcome] = useState<Outcome>('approved');
  const [comment, setComment] = useState('');
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [results, setResults] = useState<RouterOutputs['reviews']['decideBulk'] | null>(null);
  const decide = useMutation(trpc.reviews.decideBulk.mutationOptions());
  const lineAfter = ranking.rows.findIndex((r, i) => r.aboveLine && !ranking.rows.slice(i + 1).some((next) => next.aboveLine));
  const titleOf = (id: string) => ranking.rows.find((r) => r.applicationId === id)?.projectTitle ?? id;

  function toggle(id: string) {
    const next = new Set(selected);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    setSelected(next);
  }

  async function onSubmit(event: React.FormEvent) {
    event.preventDefault();
    setErrors({ fields: {} });
    setResults(null);
    try {
      const answer = await decide.mutateAsync({ roundId: ranking.round.id, applicationIds: [...selected], outcome, comment });
      setResults(answer);
      setSelected(new Set());
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, ['comment', 'applicationIds', 'outcome']));
    }
  }

  const decided = results?.filter((r) => r.status !== null).length ?? 0;
  const columns = canDecide ? 8 : 7;
  return (
    <form onSubmit={onSubmit} noValidate aria-label={t('ranking.bulk')}>
      <Table>
        <thead>
          <tr>
            {canDecide && (
              <Th>
                <span className="sr-only">{t('ranking.bulk')}</span>
              </Th>
            )}
            <Th className="text-right">{t('ranking.rank')}</Th>
            <Th>{t('ranking.project')}</Th>
            <Th className="text-right">{t('ranking.score')}</Th>
            <Th className="text-right">{t('ranking.reviews')}</Th>
            <Th className="text-right">{t('ranking.requested')}</Th>
            <Th className="text-right">{t('ranking.cumulative')}</Th>
            <Th>{t('ranking.state')}</Th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {ranking.rows.map((r, i) => (
            <Fragment key={r.applicationId ?? `withheld-${r.rank}`}>
              <tr data-testid="ranking-row" data-above-line={r.aboveLine ? 'true' : 'false'} className={cx(!r.aboveLine && 'text-slate-500')}>
                {canDecide && (
                  <Td>
                    {r.status === 'submitted' && r.applicationId && (
                      <input type="checkbox" checked={selected.has(r.applicationId)} onChange={() => toggle(r.applicationId!)} aria-label={t('ranking.select', { project: r.projectTitle ?? '' })} />
                    )}
                  </Td>
                )}
                <Td className="text-right tabular-nums">{r.rank}</Td>
                <Td>
                  {r.excluded ? (
                    <span className="text-slate-500 italic">{t('ranking.withheld')}</span>
                  ) : (
                    <>
                      <Link href={`/staff/applications/${r.applicationId}`} className="font-medium text-indigo-700 hover:underline">
                        {r.projectTitle}
                      </Link>
                      <span className="block text-xs text-slate-500">{r.orgName}</span>
                    </>
                  )}
                </Td>
                <Td className="text-right font-medium tabular-nums">{r.scoreHundredths === null ? (r.excluded ? '—' : <span className="text-slate-500">{t('ranking.unscored')}</span>) : (r.scoreHundredths / 100).toLocaleString(locale, { minimumFractionDigits: 2, maximumFractionDigits: 2 })}</Td>
                <Td className="text-right tabular-nums">{r.scoredReviews === null ? '—' : `${r.scoredReviews}/${r.assignedReviews}`}</Td>
                <Td className="text-right tabular-nums whitespace-nowrap">{formatGpuHours(locale, r.gpuSeconds)}</Td>
                <Td className="text-right tabular-nums whitespace-nowrap">{r.status === 'submitted' || r.status === 'approved' ? formatGpuHours(locale, r.cumulativeGpuSeconds) : '—'}</Td>
                <Td>
                  <Badge tone={STATUS_TONE[r.status]}>{t(`applicationStatus.${r.status}`)}</Badge>
                </Td>
              </tr>
              {i === lineAfter && (
                <tr data-testid="cut-line" aria-label={t('ranking.cutLine', { hours: formatGpuHours(locale, ranking.round.gpuSecondsPerRound) })}>
                  <td colSpan={columns} className="border-t-2 border-dashed border-red-400 px-3 py-1 text-xs font-medium text-red-700">
                    {t('ranking.cutLine', { hours: formatGpuHours(locale, ranking.round.gpuSecondsPerRound) })}
                  </td>
                </tr>
              )}
            </Fragment>
          ))}
        </tbody>
      </Table>
      {canDecide && decidable.length > 0 && (
        <div className="mt-6 space-y-4 border-t border-slate-100 pt-4">
          <h3 className="text-sm font-semibold text-slate-800">{t('ranking.bulk')}</h3>
          <p className="text-sm text-slate-600">{t('ranking.bulkHint')}</p>
          <OutcomePicker legend={t('ranking.outcome')} outcome={outcome} onChange={setOutcome} />
          <Field label={t('ranking.comment')} error={errors.fields.comment}>
            <textarea name="comment" rows={3} maxLength={5000} value={comment} onChange={(e) => setComment(e.target.value)} />
          </Field>
          {errors.fields.applicationIds && <Alert tone="error">{errors.fields.applicationIds}</Alert>}
          {errors.message && <Alert tone="error">{errors.message}</Alert>}
          <Button type="submit" disabled={decide.isPending || selected.size === 0}>
            {t('ranking.apply', { count: selected.size })}
          </Button>
        </div>
      )}
      {results && (
        <div className="mt-4 space-y-2" data-testid="bulk-results">
          <Alert tone={decided === results.length ? 'success' : 'warning'}>{t('ranking.done', { count: decided })}</Alert>
          {results
            .filter((r) => r.error)
            .map((r) => (
              <p key={r.applicationId} className="text-sm text-red-700">
                {t('ranking.failed', { project: titleOf(r.applicationId), error: r.error! })}
              </p>
            ))}
        </div>
      )}
    </form>
  );
}

/** Admins: put a member of staff on the round's panel. */
export function PanelForm({ roundId, candidates }: { roundId: string; candidates: { userId: string; name: string }[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const assign = useMutation(trpc.reviews.assignPanel.mutationOptions());
  const [added, setAdded] = useState<{ assigned: number; skippedForConflict: number } | null>(null);
  const { errors, onSubmit } = useFormMutation(assign.mutateAsync, { read: (form) => ({ roundId, reviewerUserId: formValue(form, 'reviewerUserId') }), fields: ['reviewerUserId'], onDone: setAdded });
  if (candidates.length === 0) return null;
  return (
    <form onSubmit={onSubmit} className="flex flex-wrap items-end gap-3" noValidate aria-label={t('ranking.addToPanel')} data-testid="panel-form">
      <Field label={t('ranking.addToPanel')} error={errors.fields.reviewerUserId} className="min-w-64">
        <StaffSelect candidates={candidates} />
      </Field>
      <Button type="submit" disabled={assign.isPending}>
        {t('ranking.addToPanel')}
      </Button>
      {added && <span className="text-sm text-green-700">{t('ranking.panelAdded', { assigned: added.assigned, skipped: added.skippedForConflict })}</span>}
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
    </form>
  );
}
