import { describe, expect, it } from 'vitest';
import { translate } from '~/server/i18n';
import { cancelWording } from './cancel-wording';

describe('cancelWording', () => {
  it.each([
    ['batch', 'PENDING', 'Keep it waiting', 'Yes, cancel the job'],
    ['batch', 'SUBMITTING', 'Keep it waiting', 'Yes, cancel the job'],
    ['inference', 'PENDING', 'Keep it waiting', 'Yes, cancel the job'],
    ['training', 'RUNNING', 'Keep it running', 'Yes, cancel the job'],
    ['inference', 'RUNNING', 'Keep it running', 'Yes, stop the service'],
  ])('a %s job in %s offers "%s"', (kind, state, keep, confirm) => {
    const words = cancelWording(kind, state);
    expect(translate('en', words.keep)).toBe(keep);
    expect(translate('en', words.confirm)).toBe(confirm);
  });

  it('never offers "keep it running" on a job that does not run, in either language', () => {
    for (const state of ['SUBMITTING', 'PENDING']) {
      const { keep } = cancelWording('batch', state);
      expect(translate('en', keep)).not.toMatch(/running/i);
      expect(translate('de', keep)).not.toMatch(/laufen/i);
    }
  });
});
