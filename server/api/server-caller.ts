// The server-side caller for React server components: the same routers, no HTTP round trip.
import { cache } from 'react';
import { createCaller } from './root';
import { createRequestContext } from './context';

/** api returns a tRPC caller bound to the current request (one per request). */
export const api = cache(async () => createCaller(await createRequestContext()));
