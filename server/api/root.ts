import { modelsRouter } from './routers/models';
import { accountRouter } from './routers/account';
import { apiRouter } from './routers/api';
import { allocationRouter } from './routers/allocation';
import { applicationRouter } from './routers/application';
import { catalogueRouter } from './routers/catalogue';
import { notificationRouter } from './routers/notification';
import { projectRouter } from './routers/project';
import { reportRouter } from './routers/report';
import { invitationRouter } from './routers/invitation';
import { callRouter } from './routers/call';
import { allocationReportRouter } from './routers/allocation-report';
import { reviewRouter } from './routers/review';
import { centreRouter } from './routers/centre';
import { filesRouter } from './routers/files';
import { invoiceRouter } from './routers/invoice';
import { jobRouter } from './routers/job';
import { organisationRouter } from './routers/organisation';
import { sessionRouter } from './routers/session';
import { staffRouter } from './routers/staff';
import { whatIfRouter } from './routers/what-if';
import { createCallerFactory, router } from './trpc';

export const appRouter = router({
  account: accountRouter,
  organisation: organisationRouter,
  invitation: invitationRouter,
  staff: staffRouter,
  whatIf: whatIfRouter,
  catalogue: catalogueRouter,
  models: modelsRouter,
  project: projectRouter,
  application: applicationRouter,
  allocation: allocationRouter,
  notification: notificationRouter,
  job: jobRouter,
  session: sessionRouter,
  files: filesRouter,
  report: reportRouter,
  invoice: invoiceRouter,
  centre: centreRouter,
  calls: callRouter,
  reviews: reviewRouter,
  allocationReports: allocationReportRouter,
  api: apiRouter,
});

export type AppRouter = typeof appRouter;

/** createCaller calls the API in-process: server components and integration tests. */
export const createCaller = createCallerFactory(appRouter);
