import { describe, expect, it } from 'vitest';
import { checkProjectPurpose, residencyAtLeast, storedPurpose } from './projects';

describe('checkProjectPurpose', () => {
  const academic = { kind: 'academic' as const, residency: 'any' as const };
  const company = { kind: 'company' as const, residency: 'EU' as const };
  it.each([
    ['research with a field of science', academic, { fieldOfScience: 'Physics' }, []],
    ['research without one', academic, { workloadKind: 'training' as const }, ['project.fieldRequired']],
    ['a company with its workload', company, { workloadKind: 'fine_tuning' as const, dataResidency: 'DE' as const }, []],
    ['a company with a field of science instead', company, { fieldOfScience: 'Robotics' }, ['project.workloadRequired']],
    ['a company asking for looser residency than its own', company, { workloadKind: 'inference' as const, dataResidency: 'any' as const }, ['project.residencyLooserThanTenant']],
  ])('%s', (_label, tenant, purpose, keys) => {
    expect(checkProjectPurpose(tenant, purpose).map((p) => p.key)).toEqual(keys);
  });

  it('keeps only what the tenant kind is asked', () => {
    expect(storedPurpose('academic', 'any', { fieldOfScience: 'Physics', workloadKind: 'training' })).toEqual({ fieldOfScience: 'Physics', workloadKind: null, dataResidency: null });
    expect(storedPurpose('company', 'EU', { fieldOfScience: 'Physics', workloadKind: 'training' })).toEqual({ fieldOfScience: null, workloadKind: 'training', dataResidency: 'EU' });
  });

  it('orders residency rules from any to Germany', () => {
    expect(residencyAtLeast('DE', 'EU')).toBe(true);
    expect(residencyAtLeast('any', 'EU')).toBe(false);
    expect(residencyAtLeast('EU', 'EU')).toBe(true);
  });
});
