import { router } from '~/server/api/trpc';

export const invoiceRouter = router({});
