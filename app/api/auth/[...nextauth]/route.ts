import NextAuth from 'next-auth';
import { authOptions } from '~/server/auth/options';

export const dynamic = 'force-dynamic';

type RouteContext = { params: Promise<{ nextauth: string[] }> };

async function handler(req: Request, ctx: RouteContext) {
  const nextAuth = NextAuth(authOptions()) as (req: Request, ctx: RouteContext) => Promise<Response>;
  return nextAuth(req, ctx);
}

export { handler as GET, handler as POST };
