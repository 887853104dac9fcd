// Upload PATCHes and downloads (the browser's and the REST API's, issue #27), the gateway's model calls
// (#29) and the browser's tRPC calls (#30), handed to the portal's HTTP server. As with the
// session proxy (session-proxy.ts), scripts/server.mjs cannot import the portal's TypeScript, which Next
// bundles: the portal's start (instrumentation.ts → startup.ts) puts the handlers on
// `globalThis.__portalTransfers`, and the server hands them the requests they own before Next sees them
// (server/api/transfers-http.ts says which and why). Without them (another server in front of Next)
// Next's routes answer the same requests the same way, only slower.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Db } from '~/db/client';
import { authOptions } from './auth/options';
import { processRestHandler } from './api/rest-handler';
import { createTransfers, transferSettings } from './api/transfers-http';

/** The contract with scripts/server.mjs: `version` says which shape this is; `owns` picks the requests; `handleRequest` answers one entirely. */
export interface PortalTransfers {
  version: 1;
  owns(method: string | undefined, url: string | undefined): boolean;
  handleRequest(req: IncomingMessage, res: ServerResponse): void;
}

const holder = globalThis as { __portalTransfers?: PortalTransfers };

/** registerTransfers builds the handlers on the process's database and offers them to the HTTP server. */
export function registerTransfers(db: Db): PortalTransfers {
  const transfers = createTransfers({ db, authSecret: authOptions().secret!, rest: processRestHandler(), ...transferSettings() });
  const registered: PortalTransfers = { version: 1, owns: (method, url) => transfers.owns(method, url), handleRequest: (req, res) => transfers.handleRequest(req, res) };
  holder.__portalTransfers = registered;
  return registered;
}
