// A project's workspace for centre staff: read only, each folder opened and each download written to
// the audit log (files.staffList / staffStat). Rendered on the server, one audit row per folder shown.
import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { Alert, Card, PageHeader, Table, Td, Th } from '~/app/_components/ui';
import { downloadHref, joinPath } from '~/app/_lib/files';
import { getT } from '~/app/_lib/i18n-server';
import { requireUser } from '~/app/_lib/session';
import { api } from '~/server/api/server-caller';
import { formatBytes, formatDateTime } from '~/server/i18n/format';

export async function generateMetadata(): Promise<Metadata> {
  return { title: (await getT()).t('files.staffTitle') };
}

export default async function StaffProjectFilesPage({ params, searchParams }: { params: Promise<{ id: string }>; searchParams: Promise<{ site?: string; path?: string }> }) {
  await requireUser();
  const [{ id }, query] = await Promise.all([params, searchParams]);
  const { t, locale, timeZone } = await getT();
  const caller = await api();
  const project = await caller.files.staffSites({ projectId: id }).catch(() => undefined);
  if (!project) notFound();
  const site = project.sites.find((s) => s.id === query.site)?.id ?? project.sites[0]?.id;
  const path = typeof query.path === 'string' ? query.path.replace(/^\/+|\/+$/g, '') : '';
  let listing: Awaited<ReturnType<typeof caller.files.staffList>> | null = null;
  let error: string | null = null;
  if (site) {
    try {
      listing = await caller.files.staffList({ projectId: id, site, path });
    } catch (e) {
      error = e instanceof Error ? e.message : String(e);
    }
  }
  const names = path ? path.split('/') : [];
  const here = (p: string, s = site) => `/staff/projects/${id}/files?site=${encodeURIComponent(s ?? '')}&path=${encodeURIComponent(p)}`;
  const staffDownload = (p: string) => `${downloadHref(id, site ?? '', p)}&as=staff`;
  return (
    <div className="space-y-6">
      <PageHeader
        title={t('files.staffTitle')}
        subtitle={
          <Link href={`/staff/tenants/${project.orgId}`} className="text-indigo-700 hover:underline">
            {project.orgName} · {project.title}
          </Link>
        }
      />
      <Alert tone="warning">{t('files.staffNote')}</Alert>
      {project.sites.length > 1 && (
        <nav aria-label={t('files.site')} className="flex flex-wrap gap-3 text-sm">
          {project.sites.map((s) => (
            <Link key={s.id} href={here('', s.id)} aria-current={s.id === site ? 'page' : undefined} className={s.id === site ? 'font-semibold text-slate-900' : 'text-indigo-700 hover:underline'}>
              {s.name}
            </Link>
          ))}
        </nav>
      )}
      <Card>
        <nav aria-label={t('files.breadcrumb')} className="mb-3 flex flex-wrap items-center gap-1 text-sm">
          <Link href={here('')} className="text-indigo-700 hover:underline">
            {t('files.workspace')}
          </Link>
          {names.map((name, i) => (
            <span key={`${i}-${name}`} className="flex items-center gap-1">
              <span className="text-slate-400">/</span>
              <Link href={here(names.slice(0, i + 1).join('/'))} className="font-mono text-indigo-700 hover:underline">
                {name}
              </Link>
            </span>
          ))}
          {listing && <span className="ml-auto text-xs text-slate-500">{t('files.count', { n: listing.total })}</span>}
        </nav>
        {error ? (
          <Alert tone="error">{error}</Alert>
        ) : !listing || listing.entries.length === 0 ? (
          <p className="text-sm text-slate-500">{t('files.folderEmpty')}</p>
        ) : (
          <Table>
            <thead>
              <tr>
                <Th>{t('files.name')}</Th>
                <Th className="text-right">{t('files.size')}</Th>
                <Th className="hidden md:table-cell">{t('files.modified')}</Th>
              </tr>
            </thead>
            <tbody data-testid="staff-files">
              {listing.entries.map((e) => (
                <tr key={e.name}>
                  <Td className="font-mono text-xs break-all">
                    {e.type === 'folder' ? (
                      <Link href={here(joinPath(path, e.name))} className="text-indigo-700 hover:underline">
                        {e.name}/
                      </Link>
                    ) : e.type === 'file' ? (
                      <a href={staffDownload(joinPath(path, e.name))} download={e.name} className="text-indigo-700 hover:underline">
                        {e.name}
                      </a>
                    ) : (
                      <span className="text-slate-500" title={t('files.linkNotFollowed')}>
                        {e.name}
                      </span>
                    )}
                  </Td>
                  <Td className="text-right whitespace-nowrap tabular-nums">{e.type === 'file' ? formatBytes(locale, e.size) : '—'}</Td>
                  <Td className="hidden whitespace-nowrap text-slate-500 md:table-cell">{formatDateTime(locale, new Date(e.modifiedAt), timeZone)}</Td>
                </tr>
              ))}
            </tbody>
          </Table>
        )}
      </Card>
    </div>
  );
}
