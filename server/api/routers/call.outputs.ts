// What the call procedures answer (issue #32).
import { z } from 'zod';
import { isoDateOut, rubricCriterionOut } from '~/server/api/outputs';

export const callRoundOut = z.object({
  id: z.string(),
  cutoffAt: isoDateOut,
  status: z.enum(['open', 'closed']),
  closedAt: isoDateOut.nullable(),
  /** Applications submitted into it (not drafts). */
  applications: z.number().int(),
});

export const callOut = z.object({
  id: z.string(),
  accessModeId: z.string(),
  modeName: z.string(),
  title: z.string(),
  description: z.string(),
  gpuSecondsPerRound: z.number().int(),
  rubric: z.array(rubricCriterionOut),
  createdAt: isoDateOut,
  rounds: z.array(callRoundOut),
});

export const openedCallOut = z.object({
  id: z.string(),
  rounds: z.array(z.object({ id: z.string(), cutoffAt: isoDateOut })),
});
