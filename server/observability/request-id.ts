// A route handler's request in its own request scope (server/request-scope.ts): the caller's sane
// X-Request-Id or a new one, in every log line written while it is answered, and on the answer.
import { inRequestScope, requestIdFrom, type RequestScope } from '~/server/request-scope';

export const REQUEST_ID_HEADER = 'x-request-id';

/** withRequestId runs a handler in the request's scope and puts the request id on its answer. */
export async function withRequestId(request: Request, handler: () => Promise<Response>, extra: Omit<RequestScope, 'requestId'> = {}): Promise<Response> {
  const requestId = requestIdFrom(request.headers.get(REQUEST_ID_HEADER));
  const response = await inRequestScope({ ...extra, requestId }, handler);
  try {
    response.headers.set(REQUEST_ID_HEADER, requestId);
    return response;
  } catch {
    // An answer with immutable headers (one passed through from fetch): copied with the header added.
    const copy = new Response(response.body, response);
    copy.headers.set(REQUEST_ID_HEADER, requestId);
    return copy;
  }
}
