'use client';
// The person's time zone: one native select (typing a letter jumps to a zone; arrow keys move), the
// zones grouped by region, the browser's own zone named as a hint. Saved through account.setTimeZone.
import { useMutation } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { Field } from '~/app/_components/field';
import { useT } from '~/app/_components/i18n';
import { Alert, Button, Card } from '~/app/_components/ui';
import { useTRPC } from '~/app/_lib/trpc';
import { formValue } from '~/app/_lib/form-value';
import { useFormMutation } from '~/app/_lib/use-form-mutation';

/** byRegion groups IANA names by their first part ("Europe"), each shown whole, so the closed select reads "Europe/Berlin". */
function byRegion(zones: string[]): { region: string; zones: { value: string; label: string }[] }[] {
  const groups = new Map<string, { value: string; label: string }[]>();
  for (const zone of zones) {
    const slash = zone.indexOf('/');
    const region = slash < 0 ? '' : zone.slice(0, slash);
    const label = zone.replaceAll('_', ' ');
    groups.set(region, [...(groups.get(region) ?? []), { value: zone, label }]);
  }
  return [...groups.entries()].map(([region, list]) => ({ region, zones: list }));
}

export function TimeZoneSetting({ current, zones }: { current: string; zones: string[] }) {
  const { t } = useT();
  const trpc = useTRPC();
  const save = useMutation(trpc.account.setTimeZone.mutationOptions());
  // Read after hydration: the server cannot know the browser's zone.
  const [browserZone, setBrowserZone] = useState<string | null>(null);
  useEffect(() => setBrowserZone(Intl.DateTimeFormat().resolvedOptions().timeZone), []);
  const { errors, done, onSubmit } = useFormMutation(save.mutateAsync, {
    read: (form) => ({ timeZone: formValue(form, 'timeZone') }),
    fields: ['timeZone'],
  });
  return (
    <Card title={t('profile.timeZoneTitle')}>
      <p className="mb-3 text-sm text-slate-600">{t('profile.timeZoneIntro')}</p>
      {/* Keyed by the saved zone, so the select shows what was stored once the page refreshes. */}
      <form key={current} onSubmit={onSubmit} className="space-y-3" data-testid="time-zone-form">
        <Field label={t('profile.timeZoneLabel')} error={errors.fields.timeZone} hint={browserZone && browserZone !== current ? t('profile.timeZoneBrowser', { zone: browserZone }) : undefined}>
          <select name="timeZone" defaultValue={current} className="w-full max-w-sm" data-testid="time-zone">
            {byRegion(zones).map((group) =>
              group.region === '' ? (
                group.zones.map((zone) => (
                  <option key={zone.value} value={zone.value}>
                    {zone.label}
                  </option>
                ))
              ) : (
                <optgroup key={group.region} label={group.region}>
                  {group.zones.map((zone) => (
                    <option key={zone.value} value={zone.value}>
                      {zone.label}
                    </option>
                  ))}
                </optgroup>
              ),
            )}
          </select>
        </Field>
        <div className="flex flex-wrap items-center gap-3">
          <Button type="submit" disabled={save.isPending}>
            {save.isPending ? t('common.working') : t('profile.timeZoneSave')}
          </Button>
          <div role="status" aria-live="polite">
            {done && save.data && <Alert tone="success">{t('profile.timeZoneSaved', { zone: save.data.timeZone })}</Alert>}
          </div>
        </div>
        {errors.message && <Alert tone="error">{errors.message}</Alert>}
      </form>
    </Card>
  );
}
