// The reviews of a decided application as its applicant reads them (issue #32): each review's scores on
// the call's rubric and its comment, numbered, without the reviewer's name or the internal note.
import type { Locale, MessageKey, MessageParams } from '~/server/i18n/core';
import { Card } from './ui';

/** A rubric criterion's name in the reader's language. */
export function criterionName(locale: Locale, criterion: { name: string; nameDe: string }): string {
  return locale === 'de' && criterion.nameDe ? criterion.nameDe : criterion.name;
}

export interface ApplicantReviewsView {
  rubric: { id: string; name: string; nameDe: string }[];
  items: { id: string; scores: Record<string, number>; commentToApplicant: string }[];
}

export function ApplicantReviews({ reviews, t, locale }: { reviews: ApplicantReviewsView; t: (key: MessageKey, params?: MessageParams) => string; locale: Locale }) {
  if (reviews.items.length === 0) return null;
  return (
    <Card title={t('reviews.applicantHeading')}>
      <p className="mb-3 text-sm text-slate-600">{t('reviews.applicantHint')}</p>
      <ol className="space-y-4">
        {reviews.items.map((review, i) => (
          <li key={review.id} className="rounded-md p-4 ring-1 ring-slate-200" data-testid="applicant-review">
            <p className="text-sm font-semibold">{t('reviews.applicantReview', { n: i + 1 })}</p>
            <dl className="mt-2 grid gap-2 text-sm sm:grid-cols-3">
              {reviews.rubric.map((c) => (
                <div key={c.id}>
                  <dt className="text-slate-500">{criterionName(locale, c)}</dt>
                  <dd className="font-medium tabular-nums">{review.scores[c.id] === undefined ? '—' : t('reviews.scoreOf', { score: review.scores[c.id]! })}</dd>
                </div>
              ))}
            </dl>
            <blockquote className="mt-2 border-l-4 border-indigo-200 pl-3 text-sm whitespace-pre-line text-slate-800">{review.commentToApplicant}</blockquote>
          </li>
        ))}
      </ol>
    </Card>
  );
}
