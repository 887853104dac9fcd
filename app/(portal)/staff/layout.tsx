import type { ReactNode } from 'react';
import { requireStaff } from '~/app/_lib/session';

export default async function StaffLayout({ children }: { children: ReactNode }) {
  await requireStaff();
  return children;
}
