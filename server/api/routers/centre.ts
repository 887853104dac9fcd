import { router } from '~/server/api/trpc';

export const centreRouter = router({});
