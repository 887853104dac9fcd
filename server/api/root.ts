import { accountRouter } from './routers/account';
import { invitationRouter } from './routers/invitation';
import { organisationRouter } from './routers/organisation';
import { staffRouter } from './routers/staff';
import { createCallerFactory, router } from './trpc';

export const appRouter = router({
  account: accountRouter,
  organisation: organisationRouter,
  invitation: invitationRouter,
  staff: staffRouter,
});

export type AppRouter = typeof appRouter;

/** createCaller calls the API in-process: server components and integration tests. */
export const createCaller = createCallerFactory(appRouter);
