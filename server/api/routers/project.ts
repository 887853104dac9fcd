import { z } from 'zod';
import { budgetSync, router, tenantProcedure } from '~/server/api/trpc';
import { residencyField, textField, uuidField } from '~/server/api/fields';
import { WORKLOAD_KINDS } from '~/server/core/applications';
import { nothing } from '~/server/api/outputs';
import { projectBudgetOut, projectCreatedOut, projectPageOut, projectRowOut, projectStorageOut } from './project.outputs';
import { projectStorage } from '~/server/services/files/storage';
import { createProject, getProject, listProjects, removeProjectMember, setProjectMember } from '~/server/services/tenants/projects';
import { projectBudgetOf, setProjectBudget } from '~/server/services/billing/spending-limits';

const projectRoleField = z.enum(['pi', 'manager', 'member']);

/** A budget in whole euros, or null for none. */
const budgetEurosField = z.number().int().min(0).max(100_000_000).nullable();
/** An optional reference for invoices: empty means none. */
const invoiceReferenceField = textField(0, 64).nullish().transform((v) => (v ? v : null));

export const projectRouter = router({
  list: tenantProcedure('member')
    .output(z.array(projectRowOut))
    .query(({ ctx }) => listProjects(ctx.db, ctx.tenant)),

  get: tenantProcedure('member')
    .input(z.object({ projectId: uuidField }))
    .output(projectPageOut)
    .query(({ ctx, input }) => getProject(ctx.db, ctx.tenant, input.projectId, ctx.locale)),

  create: tenantProcedure('member')
    .input(
      z.object({
        title: textField(3, 200),
        abstract: textField(10, 5000, { multiline: true }),
        /** Research tenants: the field of science. Companies: the kind of workload and data residency instead. */
        fieldOfScience: textField(2, 120).optional(),
        workloadKind: z.enum(WORKLOAD_KINDS).optional(),
        dataResidency: residencyField.optional(),
        members: z.array(z.object({ userId: uuidField, role: projectRoleField })).max(200).default([]),
      }),
    )
    .output(projectCreatedOut)
    .mutation(({ ctx, input }) => createProject(ctx.db, ctx.tenant, input)),

  setMember: tenantProcedure('member')
    .input(z.object({ projectId: uuidField, userId: uuidField, role: projectRoleField }))
    .output(nothing)
    .mutation(({ ctx, input }) => setProjectMember(ctx.db, ctx.tenant, input, budgetSync(ctx))),

  removeMember: tenantProcedure('member')
    .input(z.object({ projectId: uuidField, userId: uuidField }))
    .output(nothing)
    .mutation(({ ctx, input }) => removeProjectMember(ctx.db, ctx.tenant, input, budgetSync(ctx))),

  /** The project's storage at each site: used (as last measured), granted, the share (issue #27). */
  storage: tenantProcedure('member')
    .input(z.object({ projectId: uuidField }))
    .output(projectStorageOut)
    .query(({ ctx, input }) => projectStorage(ctx.db, ctx.tenant, input.projectId, ctx.locale)),

  /** A company project's budgets, cost centre and purchase-order number (null until set). */
  budget: tenantProcedure('member')
    .input(z.object({ projectId: uuidField }))
    .output(projectBudgetOut.nullable())
    .query(({ ctx, input }) => projectBudgetOf(ctx.db, ctx.tenant, input.projectId)),

  /** Owners and managers set a project's monthly and total budget in euros (null: none), its cost centre and purchase-order number. */
  setBudget: tenantProcedure('manager')
    .input(z.object({ projectId: uuidField, monthlyEuros: budgetEurosField, totalEuros: budgetEurosField, costCentre: invoiceReferenceField, purchaseOrder: invoiceReferenceField }))
    .output(projectBudgetOut)
    .mutation(({ ctx, input }) =>
      setProjectBudget(ctx.db, ctx.tenant, { projectId: input.projectId, monthlyCents: cents(input.monthlyEuros), totalCents: cents(input.totalEuros), costCentre: input.costCentre, purchaseOrder: input.purchaseOrder }, ctx.now()),
    ),
});

const cents = (euros: number | null) => (euros === null ? null : euros * 100);
