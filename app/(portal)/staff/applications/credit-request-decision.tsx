'use client';
import { useMutation } from '@tanstack/react-query';
import { useRef, useState } from 'react';
import { capEurosOf } from '~/app/_components/cap-choice-field';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formValue } from '~/app/_lib/form-value';
import { useTRPC } from '~/app/_lib/trpc';
import { useFormMutation } from '~/app/_lib/use-form-mutation';
import { suggestedMonthlyCapCents } from '~/server/core/billing/monthly-cap';
import { formatEuros } from '~/server/i18n/format';

/** What the decision starts from: the request and the tenant's line and cap as they are now. */
export interface CreditRequestFigures {
  requestId: string;
  orgName: string;
  requestedCents: number;
  lineCents: number;
  capCents: number | null;
}

/** The cap suggested for a line in euros as typed ('' when there is no cap, or the line is not a number yet). */
function suggestedCapEuros(figures: CreditRequestFigures, grantedEuros: string): string {
  const granted = Number(grantedEuros);
  if (!Number.isInteger(granted) || granted <= 0) return figures.capCents === null ? '' : String(figures.capCents / 100);
  const cents = suggestedMonthlyCapCents({ capCents: figures.capCents, lineCents: figures.lineCents, newLineCents: granted * 100 });
  return cents === null ? '' : String(cents / 100);
}

/**
 * An admin raises a company's credit line and sets its monthly cap in one decision (the amount as asked
 * or another with a comment; the cap prefilled with the suggestion, following the amount until edited),
 * or rejects the request with a comment the requester reads.
 */
export function CreditRequestDecision({ figures }: { figures: CreditRequestFigures }) {
  const { t, locale } = useT();
  const trpc = useTRPC();
  const decide = useMutation(trpc.staff.decideCreditRequest.mutationOptions());
  const outcome = useRef<HTMLInputElement>(null);
  const [granted, setGranted] = useState(String(figures.requestedCents / 100));
  const [cap, setCap] = useState(() => suggestedCapEuros(figures, String(figures.requestedCents / 100)));
  const [capEdited, setCapEdited] = useState(false);
  const { errors, onSubmit } = useFormMutation(decide.mutateAsync, {
    read: (form) =>
      formValue(form, 'outcome') === 'approved'
        ? {
            requestId: figures.requestId,
            outcome: 'approved' as const,
            grantedEuros: Number(formValue(form, 'grantedEuros')),
            capEuros: capEurosOf(form),
            comment: formValue(form, 'comment'),
          }
        : { requestId: figures.requestId, outcome: 'rejected' as const, comment: formValue(form, 'comment') },
    fields: ['grantedEuros', 'capEuros', 'comment'],
  });
  const suggested = suggestedCapEuros(figures, granted);
  return (
    <form onSubmit={onSubmit} className="space-y-3" noValidate aria-label={`${t('review.creditTitle')}: ${figures.orgName}`}>
      <input ref={outcome} type="hidden" name="outcome" defaultValue="approved" />
      <Field label={t('review.creditGranted')} error={errors.fields.grantedEuros}>
        <input
          name="grantedEuros"
          type="number"
          inputMode="numeric"
          min={1}
          step={1}
          value={granted}
          onChange={(e) => {
            setGranted(e.target.value);
            if (!capEdited) setCap(suggestedCapEuros(figures, e.target.value));
          }}
        />
      </Field>
      <Field
        label={t('review.creditNewCap')}
        error={errors.fields.capEuros}
        hint={suggested === '' ? t('review.creditCapHintNone') : t('review.creditCapHint', { suggested: formatEuros(locale, Number(suggested) * 100) })}
      >
        <input
          name="capEuros"
          type="number"
          inputMode="numeric"
          min={1}
          step={1}
          value={cap}
          onChange={(e) => {
            setCap(e.target.value);
            setCapEdited(true);
          }}
        />
      </Field>
      <Field label={t('review.creditDecisionComment')} error={errors.fields.comment}>
        <input name="comment" maxLength={5000} />
      </Field>
      <div className="flex flex-wrap gap-2">
        <Button type="submit" disabled={decide.isPending} onClick={() => outcome.current && (outcome.current.value = 'approved')}>
          {t('review.creditApprove')}
        </Button>
        <Button type="submit" variant="secondary" disabled={decide.isPending} onClick={() => outcome.current && (outcome.current.value = 'rejected')}>
          {t('review.creditReject')}
        </Button>
      </div>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
    </form>
  );
}
