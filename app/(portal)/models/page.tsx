import type { Metadata } from 'next';
import Link from 'next/link';
import { Badge, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { ServiceSnippets } from '~/app/_components/service-snippets';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { GATEWAY_PATH } from '~/server/core/jobs/inference';
import { portalBaseUrl } from '~/server/env.js';
import { formatNumber } from '~/server/i18n/core';
import { formatDateTime, formatEuros } from '~/server/i18n/format';
import { StartReplica, StopReplica } from './replica-actions';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('models.title') };
}

/**
 * The centre's shared models (issue #29): what each costs a tenant of the reader's kind per million tokens,
 * where it is served now, and how to call it; the centre's admins start and stop its replicas here.
 */
export default async function ModelsPage() {
  const me = await requireUser();
  const { t, locale } = await getT();
  const caller = await api();
  const [models, org] = await Promise.all([caller.models.shared(), caller.organisation.current().catch(() => undefined)]);
  const staff = me.staffRoles.length > 0;
  const admin = me.staffRoles.includes('admin');
  const kinds = org ? [org.kind] : (['company', 'academic'] as const);
  const perM = (cents: number) => formatEuros(locale, cents);
  const endpointUrl = `${portalBaseUrl()}${GATEWAY_PATH}`;
  const example = models.find((m) => m.servedAt.length > 0) ?? models[0];
  return (
    <div className="space-y-6">
      <PageHeader title={t('models.title')} subtitle={t('models.subtitle')} />
      <Card>
        {models.length === 0 ? (
          <p className="text-sm text-slate-600">{t('models.none')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('models.model')}</Th>
                <Th className="text-right">{t('models.context')}</Th>
                {kinds.map((kind) => (
                  <Th key={kind} className="text-right">
                    {kinds.length > 1 ? t('models.priceFor', { kind: t(`kind.${kind}`) }) : t('models.price')}
                  </Th>
                ))}
                <Th>{t('models.servedAt')}</Th>
                {staff && <Th className="text-right">{t('models.calls24h')}</Th>}
              </tr>
            </thead>
            <tbody className="divide-y divide-slate-100">
              {models.map((m) => (
                <tr key={m.id} data-testid={`shared-model-${m.id}`}>
                  <Td>
                    <div className="font-medium">{m.name}</div>
                    <code className="text-xs text-slate-600">{m.id}</code>
                  </Td>
                  <Td className="text-right tabular-nums">{t('models.tokens', { count: formatNumber(locale, m.contextLength) })}</Td>
                  {kinds.map((kind) => (
                    <Td key={kind} className="text-right tabular-nums">
                      <div>{t('models.inOut', { input: perM(m.prices[kind].inputCentsPerMTokens), output: perM(m.prices[kind].outputCentsPerMTokens) })}</div>
                      {kind === 'academic' && <div className="text-xs text-slate-600">{t('models.paidInGpuHours')}</div>}
                    </Td>
                  ))}
                  <Td>
                    {m.servedAt.length === 0 ? (
                      <Badge tone="slate">{t('models.notServed')}</Badge>
                    ) : (
                      <div className="flex flex-wrap gap-1">
                        {m.servedAt.map((s) => (
                          <Badge key={s.siteId} tone="green">
                            {t('models.siteReplicas', { site: s.siteName, count: s.replicas })}
                          </Badge>
                        ))}
                      </div>
                    )}
                  </Td>
                  {staff && <Td className="text-right tabular-nums">{t('models.callsTokens', { calls: formatNumber(locale, m.calls24h ?? 0), tokens: formatNumber(locale, m.tokens24h ?? 0) })}</Td>}
                </tr>
              ))}
            </tbody>
          </Table>
        )}
        <p className="mt-4 text-xs text-slate-600">{t('models.note')}</p>
      </Card>

      {staff && models.length > 0 && (
        <Card title={t('models.replicas')}>
          <p className="mb-3 text-sm text-slate-700">{t('models.replicasIntro')}</p>
          <div className="space-y-5">
            {models.map((m) => (
              <section key={m.id} aria-label={m.name} className="space-y-2" data-testid={`replicas-${m.id}`}>
                <h3 className="text-sm font-semibold">{m.name}</h3>
                {m.replicas.length > 0 && (
                  <ul className="divide-y divide-slate-100 rounded ring-1 ring-slate-200">
                    {m.replicas.map((r) => (
                      <li key={r.jobId} className="flex flex-wrap items-center gap-3 px-3 py-2 text-sm">
                        <Badge tone={r.state === 'RUNNING' ? 'green' : 'slate'}>{t(`jobState.${r.state}`)}</Badge>
                        <span>{r.siteName}</span>
                        {r.startedAt && <span className="text-slate-600">{t('models.since', { at: formatDateTime(locale, r.startedAt) })}</span>}
                        <Link href={`/jobs/${r.jobId}`} className="text-indigo-700 hover:underline">
                          {t('models.job')}
                        </Link>
                        {admin && <StopReplica jobId={r.jobId} label={m.name} />}
                      </li>
                    ))}
                  </ul>
                )}
                {admin && <StartReplica modelId={m.id} label={m.name} classes={m.classes.map((c) => ({ id: c.id, name: `${c.name} · ${c.siteName}` }))} />}
              </section>
            ))}
          </div>
        </Card>
      )}

      {example && (
        <Card title={t('models.howTo')}>
          <p className="text-sm text-slate-700">{t('models.howToText')}</p>
          <ServiceSnippets endpointUrl={endpointUrl} model={example.id} />
        </Card>
      )}
    </div>
  );
}
