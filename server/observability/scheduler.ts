// Times every call the portal makes to its scheduler adapter and counts the failures, by adapter and
// method, without the adapters knowing (portal_scheduler_call_*). A Proxy keeps whatever else the
// adapter is — budget-enforcing, checkpointing, its output location — as it is: the port's optional
// parts are found by asking the object (isBudgetEnforcing, isCheckpointing).
import { isSchedulerRefused, isSchedulerUnavailable, type SchedulerPort } from '~/server/core/scheduler/port';
import { metrics } from './metrics';

/** The adapter's asynchronous calls that are timed; anything else passes through untouched. */
const TIMED_METHODS = new Set(['submit', 'cancel', 'jobs', 'describeCluster', 'syncBudgets', 'budgetHolds', 'checkpoint']);

function errorKind(error: unknown): 'unavailable' | 'refused' | 'other' {
  return isSchedulerUnavailable(error) ? 'unavailable' : isSchedulerRefused(error) ? 'refused' : 'other';
}

/** instrumentScheduler returns the adapter with its calls timed and their failures counted under `adapter`. */
export function instrumentScheduler<P extends SchedulerPort>(port: P, adapter: string): P {
  const wrapped = new Map<PropertyKey, unknown>();
  return new Proxy(port, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || !TIMED_METHODS.has(String(property))) return value;
      if (!wrapped.has(property)) {
        const method = String(property);
        const original = value as (...args: unknown[]) => Promise<unknown>;
        wrapped.set(property, async (...args: unknown[]) => {
          const { schedulerDuration, schedulerErrors } = metrics();
          const stop = schedulerDuration.startTimer({ adapter, method });
          try {
            return await original.apply(target, args);
          } catch (error) {
            schedulerErrors.inc({ adapter, method, error: errorKind(error) });
            throw error;
          } finally {
            stop();
          }
        });
      }
      return wrapped.get(property);
    },
  });
}
