// What-if planning for staff (server/services/planning/what-if.ts): queue a replay of a period of the centre's
// history on a proposed machine, list the runs, read one with its result.
import { z } from 'zod';
import { router, staffProcedure, todayOf } from '~/server/api/trpc';
import { catalogueIdField, dayField, textField, uuidField } from '~/server/api/fields';
import { whatIfRunOut, whatIfRunSummaryOut } from './what-if.outputs';
import { createWhatIfRun, getWhatIfRun, listWhatIfRuns, whatIfMachineView } from '~/server/services/planning/what-if';

const idField = catalogueIdField;

/** A proposed change (server/core/whatif/machine.ts WhatIfChange). */
export const whatIfChangeInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('nodes'), classId: idField, delta: z.number().int().min(-10_000).max(10_000) }),
  z.object({
    kind: z.literal('newClass'),
    id: z.string().regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'Use 1 to 32 lower-case letters, digits and hyphens, starting with a letter or digit.'),
    siteId: idField,
    templateClassId: idField,
    nodes: z.number().int().min(1).max(10_000),
    gpusPerNode: z.number().int().min(1).max(16),
    fromClassId: idField,
    sharePercent: z.number().int().min(1).max(100),
  }),
  z.object({ kind: z.literal('powerCap'), siteId: idField, capKw: z.number().positive().max(1_000_000).nullable() }),
  z.object({ kind: z.literal('pue'), siteId: idField, pueMilli: z.number().int().min(1000).max(3000) }),
  z.object({ kind: z.literal('grid'), siteId: idField, gco2PerKwh: z.number().int().min(0).max(2000) }),
  z.object({ kind: z.literal('policy'), policy: z.enum(['fifo', 'easy', 'multifactor']) }),
]);

export const whatIfRouter = router({
  /** The current machine's classes and sites, for the proposal form. */
  machine: staffProcedure()
    .output(
      z.object({
        classes: z.array(z.object({ id: z.string(), name: z.string(), siteId: z.string(), nodes: z.number().int(), gpusPerNode: z.number().int(), gpuModel: z.string() })),
        sites: z.array(z.object({ id: z.string(), name: z.string(), powerCapW: z.number().int().nullable(), pueMilli: z.number().int(), gridGco2PerKwh: z.number().int() })),
        policy: z.enum(['fifo', 'easy', 'multifactor']),
      }),
    )
    .query(({ ctx }) => whatIfMachineView(ctx.db, ctx.locale)),

  list: staffProcedure()
    .output(z.array(whatIfRunSummaryOut))
    .query(({ ctx }) => listWhatIfRuns(ctx.db)),

  get: staffProcedure()
    .input(z.object({ id: uuidField }))
    .output(whatIfRunOut)
    .query(({ ctx, input }) => getWhatIfRun(ctx.db, input.id)),

  create: staffProcedure()
    .input(z.object({ title: textField(1, 120), from: dayField, to: dayField, changes: z.array(whatIfChangeInput).min(1).max(6) }))
    .output(z.object({ id: z.string() }))
    .mutation(({ ctx, input }) => createWhatIfRun(ctx.db, ctx.actor, input, todayOf(ctx))),
});
