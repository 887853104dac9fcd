// A locale's message catalogue for the browser's client components (server/i18n/catalogue-file.ts).
import { catalogueAnswer } from '~/server/i18n/catalogue-file';

export const dynamic = 'force-dynamic';

export async function GET(_request: Request, { params }: { params: Promise<{ file: string }> }) {
  const answer = catalogueAnswer((await params).file);
  if (!answer) return Response.json({ error: 'No such catalogue: the name is <locale>.<hash>.json, e.g. the address a page links.' }, { status: 404 });
  return new Response(answer.body, { headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': answer.cacheControl } });
}
