'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { cx } from './ui';

export function NavLinks({ links, label }: { links: { href: string; label: string }[]; label: string }) {
  const pathname = usePathname();
  return (
    <nav aria-label={label} className="flex flex-wrap gap-1">
      {links.map((link) => {
        const active = pathname === link.href || pathname.startsWith(`${link.href}/`);
        return (
          <Link
            key={link.href}
            href={link.href}
            aria-current={active ? 'page' : undefined}
            className={cx('rounded-md px-3 py-1.5 text-sm font-medium', active ? 'bg-indigo-50 text-indigo-700' : 'text-slate-700 hover:bg-slate-100')}
          >
            {link.label}
          </Link>
        );
      })}
    </nav>
  );
}
