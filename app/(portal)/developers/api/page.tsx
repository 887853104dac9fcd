import type { Metadata } from 'next';
import Link from 'next/link';
import { Card, PageHeader } from '~/app/_components/ui';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { headers } from 'next/headers';
import { portalBaseUrl } from '~/server/env.js';
import { requestLinkBase } from '~/server/portal-url';
import { restDocument } from '~/server/api/rest-document';
import { ApiReference } from './reference';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('developers.title') };
}

function Code({ children, label }: { children: string; label: string }) {
  return (
    <pre tabIndex={0} aria-label={label} className="overflow-x-auto rounded-md bg-slate-900 p-3 text-xs leading-relaxed text-slate-100 focus-visible:outline focus-visible:outline-2 focus-visible:outline-indigo-600">
      <code>{children}</code>
    </pre>
  );
}

/** The REST API: how to start (a token, curl, Python) above the reference rendered from the OpenAPI document. */
export default async function ApiDocsPage() {
  await requireUser();
  const { t } = await getT();
  // PORTAL_URL, else (demo) the address this page was asked for, as the browser sees it.
  const origin = requestLinkBase(await headers(), 'http:') ?? portalBaseUrl();
  const base = `${origin}/api/v1`;
  const curl = [
    `export PORTAL_TOKEN=afp_…   # ${t('developers.curlTokenComment')}`,
    `curl -H "Authorization: Bearer $PORTAL_TOKEN" "${base}/jobs?limit=10"`,
    ``,
    `# ${t('developers.curlSubmitComment')}`,
    `curl -X POST "${base}/jobs" \\`,
    `  -H "Authorization: Bearer $PORTAL_TOKEN" -H "Content-Type: application/json" \\`,
    `  -H "Idempotency-Key: train-$(date +%Y%m%d-%H%M)" \\`,
    `  -d '{"allocationId":"<allocation id>","resourceClassId":"h100","gpus":8,"nodes":1,"walltimeMinutes":120,`,
    `       "name":"train","kind":"training","image":"pytorch:2","command":"python train.py"}'`,
    ``,
    `curl -H "Authorization: Bearer $PORTAL_TOKEN" "${base}/usage.csv?month=2026-11" -o usage.csv`,
  ].join('\n');
  const python = [
    `import os, requests`,
    ``,
    `API = "${base}"`,
    `session = requests.Session()`,
    `session.headers["Authorization"] = f"Bearer {os.environ['PORTAL_TOKEN']}"`,
    ``,
    `# ${t('developers.pythonPagesComment')}`,
    `jobs, cursor = [], None`,
    `while True:`,
    `    page = session.get(f"{API}/jobs", params={"limit": 100, "cursor": cursor}).json()`,
    `    jobs += page["items"]`,
    `    cursor = page["nextCursor"]`,
    `    if cursor is None:`,
    `        break`,
    ``,
    `answer = session.post(f"{API}/jobs/estimate", json={"allocationId": "<allocation id>", "resourceClassId": "h100",`,
    `                                                  "gpus": 8, "nodes": 1, "walltimeMinutes": 120})`,
    `if not answer.ok:`,
    `    error = answer.json()["error"]  # {code, message, fields, requestId}`,
    `    raise SystemExit(f"{error['code']}: {error['message']}")`,
    `print(answer.json()["maxCostCents"])`,
  ].join('\n');
  return (
    <div className="space-y-6">
      <PageHeader title={t('developers.title')} subtitle={t('developers.subtitle')} />
      <Card title={t('developers.startTitle')}>
        <div className="space-y-4 text-sm text-slate-700">
          <ol className="list-decimal space-y-1 pl-5">
            <li>
              {t('developers.stepToken')}{' '}
              <Link href="/profile" className="text-indigo-700 underline">
                {t('developers.profileLink')}
              </Link>
            </li>
            <li>{t('developers.stepHeader')}</li>
            <li>{t('developers.stepErrors')}</li>
            <li>{t('developers.stepLimits')}</li>
          </ol>
          <h3 className="font-semibold text-slate-900">curl</h3>
          <Code label="curl">{curl}</Code>
          <h3 className="font-semibold text-slate-900">Python</h3>
          <Code label="Python">{python}</Code>
          <p>
            {t('developers.documentIntro')}{' '}
            <a href="/api/v1/openapi.json" className="text-indigo-700 underline">
              /api/v1/openapi.json
            </a>
          </p>
        </div>
      </Card>
      <Card title={t('developers.referenceTitle')}>
        <ApiReference
          doc={restDocument(origin)}
          base={base}
          labels={{
            parameters: t('developers.parameters'),
            body: t('developers.body'),
            responses: t('developers.responses'),
            name: t('developers.name'),
            where: t('developers.where'),
            type: t('developers.type'),
            required: t('developers.required'),
            description: t('developers.description'),
            yes: t('developers.yes'),
            noToken: t('developers.noToken'),
            example: t('developers.example'),
          }}
        />
      </Card>
    </div>
  );
}
