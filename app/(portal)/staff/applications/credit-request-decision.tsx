'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';

/** An admin raises a company's credit line as asked, or rejects the request with a comment the requester reads. */
export function CreditRequestDecision({ requestId, orgName }: { requestId: string; orgName: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [comment, setComment] = useState('');
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const decide = useMutation(trpc.staff.decideCreditRequest.mutationOptions());
  async function send(outcome: 'approved' | 'rejected') {
    setErrors({ fields: {} });
    try {
      await decide.mutateAsync({ requestId, outcome, comment });
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, ['comment']));
    }
  }
  return (
    <div className="space-y-2">
      <Field label={`${t('review.creditComment')} (${orgName})`} error={errors.fields.comment}>
        <input value={comment} onChange={(e) => setComment(e.target.value)} maxLength={5000} />
      </Field>
      <div className="flex flex-wrap gap-2">
        <Button disabled={decide.isPending} onClick={() => void send('approved')}>
          {t('review.creditApprove')}
        </Button>
        <Button variant="secondary" disabled={decide.isPending} onClick={() => void send('rejected')}>
          {t('review.creditReject')}
        </Button>
      </div>
      {errors.message && <Alert tone="error">{errors.message}</Alert>}
    </div>
  );
}
