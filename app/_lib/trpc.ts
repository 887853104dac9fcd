'use client';
// The browser's tRPC client, typed by the server's router.
import { createTRPCContext } from '@trpc/tanstack-react-query';
import type { AppRouter } from '~/server/api/root';

export const { TRPCProvider, useTRPC } = createTRPCContext<AppRouter>();
