// The gateway's tests' setup (issue #29): a database, a simulated cluster on the test's clock, API tokens,
// and the REST API (with the gateway below it) served over HTTP for the official `openai` client.
import { randomUUID } from 'node:crypto';
import type { Db, DbHandle } from '~/db/client';
import { clusterConfigFromCatalogue } from '~/server/adapters/scheduler/cluster-config';
import { createSimulatedScheduler, type SimulatedScheduler } from '~/server/adapters/scheduler/simulated';
import { createRestHandler } from '~/server/api/rest';
import { apiTokens } from './api-tokens';
import { openTestDb, type TargetName } from './harness';
import { serveFetch } from './serve-fetch';

export interface GatewayRig {
  handle: DbHandle;
  db: Db;
  scheduler: SimulatedScheduler;
  tokens: ReturnType<typeof apiTokens>;
  /** The REST API's handler itself (its answers read as web Responses, as Next's route reads them). */
  rest: (req: Request) => Promise<Response>;
  /** The gateway's base URL, as the `openai` client takes it. */
  baseURL: string;
  close: () => Promise<void>;
}

/** openGateway opens a test database and serves the REST API with the gateway on it; `clock` is the test's. */
export async function openGateway(target: TargetName, o: { clock: () => Date; name: string }): Promise<GatewayRig> {
  const handle = await openTestDb(target);
  const db = handle.db;
  const scheduler = createSimulatedScheduler({ db, cluster: await clusterConfigFromCatalogue(db), speed: 60, now: o.clock, clusterId: `${o.name}-${randomUUID().slice(0, 8)}` });
  const tokens = apiTokens(db);
  const rest = createRestHandler({ db: () => Promise.resolve(db), authenticate: tokens.authenticate, portalUrl: 'http://portal.test', perMinute: 100_000, scheduler, now: o.clock });
  const served = await serveFetch(rest);
  return {
    handle,
    db,
    scheduler,
    tokens,
    rest,
    baseURL: `${served.origin}/api/v1/openai/v1`,
    close: async () => {
      await served.close();
      await handle.close();
    },
  };
}
