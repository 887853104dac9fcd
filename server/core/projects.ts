// What a project must say about itself, by tenant kind: research asks for a field of science, a
// company for what it wants to run and where its data may go. Pure.
import type { WorkloadKind } from './applications';

export type Residency = 'any' | 'EU' | 'DE';

const STRICTNESS: Record<Residency, number> = { any: 0, EU: 1, DE: 2 };

/** residencyAtLeast tells whether a residency rule is as strict as another one (DE ⊂ EU ⊂ any). */
export function residencyAtLeast(rule: Residency, floor: Residency): boolean {
  return STRICTNESS[rule] >= STRICTNESS[floor];
}

export interface ProjectPurpose {
  fieldOfScience?: string | null;
  workloadKind?: WorkloadKind | null;
  dataResidency?: Residency | null;
}

export type ProjectPurposeProblem =
  | { field: 'fieldOfScience'; key: 'project.fieldRequired' }
  | { field: 'workloadKind'; key: 'project.workloadRequired' }
  | { field: 'dataResidency'; key: 'project.residencyLooserThanTenant'; params: { residency: Residency } };

/**
 * checkProjectPurpose lists what a project of a tenant kind must still say (empty = fine): academic
 * projects a field of science; company projects their kind of workload and a data residency need no
 * looser than the tenant's own.
 */
export function checkProjectPurpose(tenant: { kind: 'academic' | 'company'; residency: Residency }, purpose: ProjectPurpose): ProjectPurposeProblem[] {
  if (tenant.kind === 'academic') return purpose.fieldOfScience?.trim() ? [] : [{ field: 'fieldOfScience', key: 'project.fieldRequired' }];
  const problems: ProjectPurposeProblem[] = [];
  if (!purpose.workloadKind) problems.push({ field: 'workloadKind', key: 'project.workloadRequired' });
  if (purpose.dataResidency && !residencyAtLeast(purpose.dataResidency, tenant.residency)) {
    problems.push({ field: 'dataResidency', key: 'project.residencyLooserThanTenant', params: { residency: tenant.residency } });
  }
  return problems;
}

/** storedPurpose keeps only what a tenant kind is asked: research a field of science, companies workload and residency. */
export function storedPurpose(kind: 'academic' | 'company', tenantResidency: Residency, purpose: ProjectPurpose): { fieldOfScience: string | null; workloadKind: WorkloadKind | null; dataResidency: Residency | null } {
  if (kind === 'academic') return { fieldOfScience: purpose.fieldOfScience?.trim() || null, workloadKind: null, dataResidency: null };
  return { fieldOfScience: null, workloadKind: purpose.workloadKind ?? null, dataResidency: purpose.dataResidency ?? tenantResidency };
}
