import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '~/server/api/root';
import { createRequestContext } from '~/server/api/context';

export const dynamic = 'force-dynamic';

function handler(req: Request) {
  return fetchRequestHandler({ endpoint: '/api/trpc', req, router: appRouter, createContext: createRequestContext });
}

export { handler as GET, handler as POST };
