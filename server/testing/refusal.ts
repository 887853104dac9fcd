// What a procedure's refusal says, for tests: its tRPC code, the field it names — a service's refusal
// names its own, the input's validation the path of its first issue — and its message ('OK' and no field
// when it is served).
import { TRPCError } from '@trpc/server';

export async function refusal(promise: Promise<unknown>): Promise<{ code: string; field?: string; message: string }> {
  try {
    await promise;
    return { code: 'OK', message: '' };
  } catch (error) {
    if (!(error instanceof TRPCError)) throw error;
    const cause = error.cause as { field?: string; issues?: { path: PropertyKey[] }[] } | undefined;
    return { code: error.code, field: cause?.field ?? (cause?.issues?.[0]?.path[0] as string | undefined), message: error.message };
  }
}
