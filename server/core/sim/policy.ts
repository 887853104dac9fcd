/** Named scheduling policies and their default multifactor settings (Slurm's defaults: 7-day max age and half-life). */
import { SimInputError } from './errors';
import type { PolicyConfig, PolicyName } from './types';

const WEEK_SECONDS = 7 * 24 * 3600;

/** POLICY_NAMES lists the names `policyFromName` accepts. */
export const POLICY_NAMES: readonly PolicyName[] = ['fifo', 'easy', 'multifactor'];

/** isPolicyName tells whether a string names a known policy. */
export function isPolicyName(name: string): name is PolicyName {
  return (POLICY_NAMES as readonly string[]).includes(name);
}

/** policyFromName builds a policy: fifo (submit order, no backfill), easy (submit order + EASY backfill), multifactor (age + fair-share priority + EASY backfill). */
export function policyFromName(name: PolicyName, overrides: Partial<PolicyConfig> = {}): PolicyConfig {
  const base: PolicyConfig = {
    order: 'submit',
    backfill: 'none',
    ageWeight: 1000,
    fairShareWeight: 10000,
    maxAgeSeconds: WEEK_SECONDS,
    usageHalfLifeSeconds: WEEK_SECONDS,
  };
  if (name === 'easy') base.backfill = 'easy';
  else if (name === 'multifactor') {
    base.order = 'multifactor';
    base.backfill = 'easy';
  } else if (name !== 'fifo') throw new SimInputError(`unknown policy "${String(name)}" (expected fifo, easy or multifactor)`);
  return { ...base, ...overrides };
}
