'use client';
// The forms of an application's review panel (issue #32): a reviewer scores on the rubric, declines, or
// declares a conflict of interest; an admin assigns a reviewer or overrides a conflict with its reason.
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { criterionName } from '~/app/_components/applicant-reviews';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, cx } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';
import { StaffSelect } from './decision-parts';

const SCORES = [1, 2, 3, 4, 5] as const;

type Criterion = { id: string; name: string; nameDe: string };

/** The reviewer's own review: each criterion 1–5, the comment to the applicant, the internal note. */
export function ReviewForm({ applicationId, rubric, mine }: { applicationId: string; rubric: Criterion[]; mine: { status: 'assigned' | 'scored' | 'declined'; scores: Record<string, number> | null; commentToApplicant: string; internalNote: string } }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const submit = useMutation(trpc.reviews.submit.mutationOptions());
  const { errors, done, onSubmit } = useFormMutation(submit.mutateAsync, {
    read: (form) => ({
      applicationId,
      // Only the criteria scored: the server names one left out.
      scores: Object.fromEntries(rubric.flatMap((c) => (formValue(form, `score-${c.id}`) ? [[c.id, Number(formValue(form, `score-${c.id}`))]] : []))),
      commentToApplicant: formValue(form, 'commentToApplicant'),
      internalNote: formValue(form, 'internalNote'),
    }),
    fields: ['scores', 'commentToApplicant', 'internalNote'],
  });
  return (
    <form onSubmit={onSubmit} className="space-y-4" noValidate aria-label={t('reviews.yours')} data-testid="review-form">
      <p className="text-sm text-slate-600">{t('reviews.yoursHint')}</p>
      {rubric.map((c) => (
        <fieldset key={c.id}>
          <legend className="text-sm font-medium text-slate-800">{criterionName(locale, c)}</legend>
          <div className="mt-1 flex flex-wrap gap-2">
            {SCORES.map((score) => (
              <label key={score} className="cursor-pointer rounded-md px-3 py-1.5 text-sm ring-1 ring-slate-300 has-[:checked]:bg-indigo-50 has-[:checked]:ring-2 has-[:checked]:ring-indigo-600">
                <input type="radio" name={`score-${c.id}`} value={score} defaultChecked={mine.scores?.[c.id] === score} className="mr-1.5" data-testid={`score-${c.id}-${score}`} />
                {score}
              </label>
            ))}
          </div>
        </fieldset>
      ))}
      {errors.fields.scores && (
        <p className="text-sm text-red-700" role="alert">
          {errors.fields.scores}
        </p>
      )}
      <Field label={t('reviews.commentToApplicant')} error={errors.fields.commentToApplicant}>
        <textarea name="commentToApplicant" rows={4} maxLength={5000} defaultValue={mine.commentToApplicant} />
      </Field>
      <Field label={t('reviews.internalNote')} error={errors.fields.internalNote}>
        <textarea name="internalNote" rows={2} maxLength={5000} defaultValue={mine.internalNote} />
      </Field>
      <div className="flex items-center gap-3">
        <Button type="submit" disabled={submit.isPending}>
          {mine.status === 'scored' ? t('reviews.revise') : t('reviews.submit')}
        </Button>
        {done && <span className="text-sm text-green-700">{t('reviews.saved')}</span>}
      </div>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
    </form>
  );
}

/** A reason and a button: declining a review, or declaring a conflict of interest. */
function ReasonForm({ label, reasonLabel, hint, tone, send, testId }: { label: string; reasonLabel: string; hint?: string; tone: 'secondary' | 'danger'; send: (reason: string) => Promise<unknown>; testId: string }) {
  const { errors, onSubmit } = useFormMutation(send, { read: (form) => formValue(form, 'reason'), fields: ['reason'] });
  return (
    <form onSubmit={onSubmit} className="space-y-2" noValidate aria-label={label} data-testid={testId}>
      <Field label={reasonLabel} error={errors.fields.reason} hint={hint}>
        <input name="reason" maxLength={1000} />
      </Field>
      <Button type="submit" variant={tone}>
        {label}
      </Button>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
    </form>
  );
}

export function DeclineForm({ applicationId }: { applicationId: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const decline = useMutation(trpc.reviews.decline.mutationOptions());
  return <ReasonForm label={t('reviews.decline')} reasonLabel={t('reviews.declineReason')} tone="secondary" send={(reason) => decline.mutateAsync({ applicationId, reason })} testId="decline-form" />;
}

export function DeclareConflictForm({ applicationId }: { applicationId: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const declare = useMutation(trpc.reviews.declareConflict.mutationOptions());
  return (
    <ReasonForm
      label={t('reviews.declare')}
      reasonLabel={t('reviews.declareReason')}
      hint={t('reviews.declareHint')}
      tone="danger"
      // Declared, the application is no longer theirs to see: back to the queue.
      send={async (reason) => {
        await declare.mutateAsync({ applicationId, reason });
        router.push('/staff/applications');
      }}
      testId="declare-conflict-form"
    />
  );
}

/** Admins: assign one of the staff who are neither assigned nor excluded. */
export function AssignReviewerForm({ applicationId, candidates }: { applicationId: string; candidates: { userId: string; name: string }[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const assign = useMutation(trpc.reviews.assign.mutationOptions());
  const { errors, onSubmit } = useFormMutation(assign.mutateAsync, { read: (form) => ({ applicationId, reviewerUserId: formValue(form, 'reviewerUserId') }), fields: ['reviewerUserId'] });
  if (candidates.length === 0) return <p className="text-sm text-slate-600">{t('reviews.noneToAssign')}</p>;
  return (
    <form onSubmit={onSubmit} className="flex flex-wrap items-end gap-3" noValidate aria-label={t('reviews.assign')} data-testid="assign-reviewer-form">
      <Field label={t('reviews.assign')} error={errors.fields.reviewerUserId} className="min-w-64">
        <StaffSelect candidates={candidates} />
      </Field>
      <Button type="submit" disabled={assign.isPending}>
        {t('reviews.assignButton')}
      </Button>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
    </form>
  );
}

/** Admins: lift a colleague's conflict with the application, with the reason the audit log keeps. */
export function OverrideConflictForm({ applicationId, excluded }: { applicationId: string; excluded: { userId: string; name: string; reason: string }[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const override = useMutation(trpc.reviews.overrideConflict.mutationOptions());
  const { errors, onSubmit } = useFormMutation(override.mutateAsync, {
    read: (form) => ({ applicationId, reviewerUserId: formValue(form, 'reviewerUserId'), reason: formValue(form, 'reason') }),
    fields: ['reviewerUserId', 'reason'],
  });
  if (excluded.length === 0) return null;
  return (
    <form onSubmit={onSubmit} className={cx('grid gap-3 md:grid-cols-[16rem_1fr_auto] md:items-end')} noValidate aria-label={t('reviews.override')} data-testid="override-conflict-form">
      <Field label={t('reviews.override')} error={errors.fields.reviewerUserId}>
        <select name="reviewerUserId" defaultValue={excluded[0]!.userId}>
          {excluded.map((c) => (
            <option key={c.userId} value={c.userId}>
              {c.name} ({c.reason})
            </option>
          ))}
        </select>
      </Field>
      <Field label={t('reviews.overrideReason')} error={errors.fields.reason}>
        <input name="reason" maxLength={1000} />
      </Field>
      <Button type="submit" variant="secondary" disabled={override.isPending}>
        {t('reviews.overrideButton')}
      </Button>
      {errors.message && (
        <div className="md:col-span-3">
          <Alert tone="error">{errors.message}</Alert>
        </div>
      )}
    </form>
  );
}
