import { router } from '~/server/api/trpc';

export const reportRouter = router({});
