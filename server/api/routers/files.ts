// Project workspaces on the sites' filesystems (issue #27): list, make folders, move, delete; a job's
// output. Uploads (tus) and downloads (Range, archives) are HTTP routes of their own (server/api/files-http.ts),
// with the same access rules (server/services/files/files.ts).
import { z } from 'zod';
import { rootsOf, router, staffProcedure, tenantProcedure } from '~/server/api/trpc';
import { uuidField } from '~/server/api/fields';
import { isoDateOut } from '~/server/api/outputs';
import { jobWorkspace, projectWorkspace, readJobOutput, staffProjectSites, staffWorkspace, workspaceSites, MAX_OUTPUT_CHUNK } from '~/server/services/files/files';
import { checkUploadTarget, listFolder, makeFolder, moveEntry, removeEntry, statEntry, MAX_PAGE } from '~/server/services/files/workspace';
import { MAX_UPLOAD_BYTES } from '~/server/services/files/uploads';
import { checkStorageQuota, recordStorageChange } from '~/server/services/files/storage';
import { MAX_PATH_BYTES } from '~/server/core/files/paths';
import { localName } from '~/server/catalogue';

/** A workspace path as typed: the rules (no `..`, no absolute path…) are checked by the service, which names the problem. */
const pathField = z.string().max(MAX_PATH_BYTES * 4);
/** A site's id as the catalogue writes them (server/catalogue.ts): a bad one is refused here, before any query. */
const siteField = z.string().regex(/^[a-z0-9][a-z0-9-]{0,39}$/, 'files.siteFormat');

const entryOut = z.object({
  name: z.string(),
  type: z.enum(['folder', 'file', 'link', 'other']),
  size: z.number().int(),
  modifiedAt: isoDateOut,
});

const listingOut = z.object({ entries: z.array(entryOut), nextCursor: z.string().nullable(), total: z.number().int() });

const outputOut = z.object({
  text: z.string(),
  start: z.number().int(),
  end: z.number().int(),
  size: z.number().int(),
  exists: z.boolean(),
  done: z.boolean(),
});

export const filesRouter = router({
  /** The sites the project has a workspace at (those its residency allows). */
  sites: tenantProcedure('member')
    .meta({ scope: 'files:read', openapi: { method: 'GET', path: '/projects/{projectId}/workspaces', tags: ['files'], summary: 'The sites a project has a workspace at', protect: true } })
    .input(z.object({ projectId: uuidField }))
    .output(z.array(z.object({ id: z.string(), name: z.string() })))
    .query(async ({ ctx, input }) => (await workspaceSites(ctx.db, ctx.tenant, input.projectId)).map((s) => ({ id: s.id, name: localName(ctx.locale, s) }))),

  /** One page of a folder: folders first, then files, by name; `cursor` from the page before. */
  list: tenantProcedure('member')
    .meta({ scope: 'files:read', openapi: { method: 'GET', path: '/projects/{projectId}/files', tags: ['files'], summary: 'List a folder of a project workspace, a page at a time', protect: true } })
    .input(z.object({ projectId: uuidField, site: siteField, path: pathField.default(''), cursor: z.string().max(2000).nullish(), limit: z.coerce.number().int().min(1).max(MAX_PAGE).default(200) }))
    .output(listingOut)
    .query(async ({ ctx, input }) => {
      const workspace = await projectWorkspace(ctx.db, ctx.tenant, { projectId: input.projectId, siteId: input.site }, rootsOf(ctx));
      return listFolder(workspace, input.path, { cursor: input.cursor ?? null, limit: input.limit });
    }),

  /** What a path is (file, folder, link), its size and time; the download routes ask it first (access and existence). */
  stat: tenantProcedure('member')
    .meta({ scope: 'files:read', openapi: { method: 'GET', path: '/projects/{projectId}/files/stat', tags: ['files'], summary: 'What a path in a project workspace is', protect: true } })
    .input(z.object({ projectId: uuidField, site: siteField, path: pathField.default('') }))
    .output(entryOut)
    .query(async ({ ctx, input }) => {
      const workspace = await projectWorkspace(ctx.db, ctx.tenant, { projectId: input.projectId, siteId: input.site }, rootsOf(ctx));
      return statEntry(workspace, input.path);
    }),

  makeFolder: tenantProcedure('member')
    .meta({ scope: 'files:write', openapi: { method: 'POST', path: '/projects/{projectId}/files/folders', tags: ['files'], summary: 'Make a folder in a project workspace', protect: true } })
    .input(z.object({ projectId: uuidField, site: siteField, path: pathField }))
    .output(z.object({ path: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const workspace = await projectWorkspace(ctx.db, ctx.tenant, { projectId: input.projectId, siteId: input.site }, rootsOf(ctx));
      await makeFolder(workspace, input.path);
      return { path: input.path.replace(/\/+$/, '') };
    }),

  move: tenantProcedure('member')
    .meta({ scope: 'files:write', openapi: { method: 'POST', path: '/projects/{projectId}/files/move', tags: ['files'], summary: 'Rename or move a file or folder in a project workspace', protect: true } })
    .input(z.object({ projectId: uuidField, site: siteField, from: pathField, to: pathField }))
    .output(z.object({ path: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const workspace = await projectWorkspace(ctx.db, ctx.tenant, { projectId: input.projectId, siteId: input.site }, rootsOf(ctx));
      await moveEntry(workspace, input.from, input.to);
      return { path: input.to.replace(/\/+$/, '') };
    }),

  remove: tenantProcedure('member')
    .meta({ scope: 'files:write', openapi: { method: 'DELETE', path: '/projects/{projectId}/files', tags: ['files'], summary: 'Delete a file or a folder with everything in it', protect: true } })
    .input(z.object({ projectId: uuidField, site: siteField, path: pathField }))
    .output(z.object({ bytes: z.number().int() }))
    .mutation(async ({ ctx, input }) => {
      const workspace = await projectWorkspace(ctx.db, ctx.tenant, { projectId: input.projectId, siteId: input.site }, rootsOf(ctx));
      const removed = await removeEntry(workspace, input.path);
      await recordStorageChange(ctx.db, { orgId: ctx.tenant.org.id, projectId: input.projectId, siteId: input.site, deltaBytes: -removed.bytes, now: ctx.now() });
      return removed;
    }),

  /**
   * Before a resumable upload starts (server/api/uploads-http.ts): may the person write this path, is the
   * name free and does the file fit. Not a REST endpoint of its own: `POST /api/v1/uploads` asks it.
   */
  startUpload: tenantProcedure('member')
    .meta({ scope: 'files:write' })
    .input(z.object({ projectId: uuidField, site: siteField, path: pathField, size: z.number().int().min(0).max(MAX_UPLOAD_BYTES).nullable() }))
    .output(z.object({ userId: z.string(), orgId: z.string() }))
    .mutation(async ({ ctx, input }) => {
      const workspace = await projectWorkspace(ctx.db, ctx.tenant, { projectId: input.projectId, siteId: input.site }, rootsOf(ctx));
      await checkUploadTarget(workspace, input.path);
      await checkStorageQuota(ctx.db, { projectId: input.projectId, siteId: input.site, askedBytes: input.size }, ctx.locale);
      return { userId: ctx.tenant.userId, orgId: ctx.tenant.org.id };
    }),

  /** Staff: a project's tenant, title and the sites it has a workspace at. */
  staffSites: staffProcedure()
    .input(z.object({ projectId: uuidField }))
    .output(z.object({ title: z.string(), orgId: z.string(), orgName: z.string(), sites: z.array(z.object({ id: z.string(), name: z.string() })) }))
    .query(async ({ ctx, input }) => {
      const found = await staffProjectSites(ctx.db, input.projectId);
      return { ...found, sites: found.sites.map((s) => ({ id: s.id, name: localName(ctx.locale, s) })) };
    }),

  /** Staff: one page of a folder of any project's workspace, read only; audited (files.staff_listed). */
  staffList: staffProcedure()
    .input(z.object({ projectId: uuidField, site: siteField, path: pathField.default(''), cursor: z.string().max(2000).nullish() }))
    .output(listingOut)
    .query(async ({ ctx, input }) => {
      const workspace = await staffWorkspace(ctx.db, ctx.actor, { projectId: input.projectId, siteId: input.site, path: input.path, action: 'files.staff_listed' }, rootsOf(ctx));
      return listFolder(workspace, input.path, { cursor: input.cursor ?? null, limit: MAX_PAGE });
    }),

  /** Staff: what a path is, before a download (server/api/files-http.ts with `as=staff`); audited (files.staff_downloaded). */
  staffStat: staffProcedure()
    .input(z.object({ projectId: uuidField, site: siteField, path: pathField.default('') }))
    .output(entryOut)
    .query(async ({ ctx, input }) => {
      const workspace = await staffWorkspace(ctx.db, ctx.actor, { projectId: input.projectId, siteId: input.site, path: input.path, action: 'files.staff_downloaded' }, rootsOf(ctx));
      return statEntry(workspace, input.path);
    }),

  /** A job's folder: where it lies in its project's workspace, and one page of its files. */
  jobFolder: tenantProcedure('member')
    .meta({ scope: 'files:read', openapi: { method: 'GET', path: '/jobs/{jobId}/files', tags: ['files'], summary: "A job's folder in its project's workspace", protect: true } })
    .input(z.object({ jobId: uuidField, path: pathField.default(''), cursor: z.string().max(2000).nullish() }))
    .output(z.object({ projectId: z.string(), site: z.string(), folder: z.string(), listing: listingOut }))
    .query(async ({ ctx, input }) => {
      const { job, workspace, folder } = await jobWorkspace(ctx.db, ctx.tenant, input.jobId, rootsOf(ctx));
      const path = input.path ? `${folder}/${input.path}` : folder;
      try {
        return { projectId: job.projectId, site: job.siteId, folder, listing: await listFolder(workspace, path, { cursor: input.cursor ?? null, limit: MAX_PAGE }) };
      } catch (error) {
        // A job that has not started yet has no folder: an empty listing, not an error.
        if (error instanceof Error && 'key' in error && error.key === 'files.notFound' && !input.path) return { projectId: job.projectId, site: job.siteId, folder, listing: { entries: [], nextCursor: null, total: 0 } };
        throw error;
      }
    }),

  /**
   * A piece of a job's stdout or stderr: the last `limit` bytes, what follows `from` (following it live),
   * or what precedes `before` (older lines). Whole lines, at most 256 KiB.
   */
  output: tenantProcedure('member')
    .meta({ openapi: { method: 'GET', path: '/jobs/{jobId}/output', tags: ['jobs'], summary: "A piece of a job's stdout or stderr (follow it with `from`)", protect: true } })
    .input(
      z.object({
        jobId: uuidField,
        stream: z.enum(['stdout', 'stderr']).default('stdout'),
        task: z.coerce.number().int().min(0).max(99_999).optional(),
        from: z.coerce.number().int().min(0).optional(),
        before: z.coerce.number().int().min(0).optional(),
        limit: z.coerce.number().int().min(1).max(MAX_OUTPUT_CHUNK).optional(),
      }),
    )
    .output(outputOut)
    .query(({ ctx, input }) => readJobOutput(ctx.db, ctx.tenant, input, rootsOf(ctx))),
});
