'use client';
// The monthly cap staff decide with a new or adjusted credit line (issue #24): prefilled with the cap
// suggested for the tenant's lines as they would be, following the amount as it is typed until staff
// type a cap themselves. Empty: no cap. Remount it (a new `key`) to start from the suggestion again.
import { useState } from 'react';
import { suggestedCapForLinesChange } from '~/server/core/billing/monthly-cap';
import { formatEuros } from '~/server/i18n/format';
import { formValue } from '~/app/_lib/form-value';
import { Field } from './field';
import { useT } from './i18n';

/** centsOfTypedEuros reads a whole amount of euros as typed into cents (0 while it is not one yet). */
export function centsOfTypedEuros(text: string): number {
  const euros = Number(text);
  return text.trim() !== '' && Number.isSafeInteger(euros) ? euros * 100 : 0;
}

/** capEurosOf reads the cap field of a submitted form: null when empty (no cap), else the number typed. */
export function capEurosOf(form: FormData): number | null {
  const text = formValue(form, 'capEuros').trim();
  return text === '' ? null : Number(text);
}

export function CapChoiceField({
  capCents,
  linesCents,
  changeCents,
  error,
  className,
}: {
  /** The tenant's cap now (null: none). */
  capCents: number | null;
  /** The tenant's active credit lines together now. */
  linesCents: number;
  /** How the lines change with this decision (the amount typed, in cents). */
  changeCents: number;
  error?: string;
  className?: string;
}) {
  const { t, locale } = useT();
  const [typed, setTyped] = useState<string | null>(null);
  const suggested = suggestedCapForLinesChange({ capCents, linesCents, changeCents });
  let hint = t('credit.capHintNone');
  if (suggested !== null) hint = suggested === capCents ? t('credit.capHintKept') : t('credit.capHint', { suggested: formatEuros(locale, suggested) });
  return (
    <Field label={t('credit.capField')} error={error} hint={hint} className={className}>
      <input
        name="capEuros"
        type="number"
        inputMode="numeric"
        min={0}
        step={1}
        value={typed ?? (suggested === null ? '' : String(suggested / 100))}
        onChange={(e) => setTyped(e.target.value)}
      />
    </Field>
  );
}
