import { forbidden } from 'next/navigation';
import type { ReactNode } from 'react';
import { currentUser } from '~/app/_lib/session';

export default async function StaffLayout({ children }: { children: ReactNode }) {
  const me = await currentUser();
  if (!me?.staffRoles.length) forbidden();
  return children;
}
