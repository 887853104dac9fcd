'use client';
import { useMutation } from '@tanstack/react-query';
import { useRouter } from 'next/navigation';
import { useId, useState } from 'react';
import { inputClass } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button } from '~/app/_components/ui';
import { formErrors, type FormErrors } from '~/app/_lib/errors';
import { useTRPC } from '~/app/_lib/trpc';

/** An admin starts a replica of a shared model on one of its classes; the page then lists it. */
export function StartReplica({ modelId, label, classes }: { modelId: string; label: string; classes: { id: string; name: string }[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const id = useId();
  const [resourceClassId, setResourceClassId] = useState(classes[0]?.id ?? '');
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const start = useMutation(trpc.models.start.mutationOptions());
  return (
    <form
      className="flex flex-wrap items-end gap-2"
      onSubmit={async (event) => {
        event.preventDefault();
        setErrors({ fields: {} });
        try {
          await start.mutateAsync({ modelId, resourceClassId });
          router.refresh();
        } catch (error) {
          setErrors(formErrors(error, ['resourceClassId']));
        }
      }}
    >
      <label htmlFor={id} className="text-sm">
        <span className="mb-1 block text-xs font-medium text-slate-700">{t('models.startOn')}</span>
        <select id={id} value={resourceClassId} onChange={(e) => setResourceClassId(e.target.value)} className={`${inputClass} w-full sm:w-72`}>
          {classes.map((c) => (
            <option key={c.id} value={c.id}>
              {c.name}
            </option>
          ))}
        </select>
      </label>
      <Button type="submit" disabled={start.isPending} aria-label={t('models.startAria', { model: label })}>
        {start.isPending ? t('common.working') : t('models.start')}
      </Button>
      {(errors.message ?? errors.fields.resourceClassId) && (
        <div className="w-full">
          <Alert tone="error">{errors.fields.resourceClassId ?? errors.message}</Alert>
        </div>
      )}
    </form>
  );
}

/** An admin stops a replica: it ends COMPLETED, its GPU time the centre's. */
export function StopReplica({ jobId, label }: { jobId: string; label: string }) {
  const { t } = useT();
  const trpc = useTRPC();
  const router = useRouter();
  const [error, setError] = useState<string | undefined>();
  const stop = useMutation(trpc.models.stop.mutationOptions());
  return (
    <span className="inline-flex items-center gap-2">
      <Button
        variant="danger"
        disabled={stop.isPending}
        aria-label={t('models.stopAria', { model: label })}
        onClick={async () => {
          setError(undefined);
          try {
            await stop.mutateAsync({ jobId });
            router.refresh();
          } catch (e) {
            setError(formErrors(e, []).message);
          }
        }}
      >
        {stop.isPending ? t('common.working') : t('models.stop')}
      </Button>
      {error && <span className="text-xs text-red-700">{error}</span>}
    </span>
  );
}
