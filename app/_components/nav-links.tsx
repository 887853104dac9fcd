'use client';
import Link from 'next/link';
import { usePathname } from 'next/navigation';
import { useEffect, useId, useState, type ReactNode } from 'react';
import { cx } from './ui';

/**
 * PortalNav is the header's navigation and controls: on wide screens the controls sit beside the
 * brand and the links on a row of their own (the panel is `display: contents`), below the `lg`
 * breakpoint both sit behind a menu button (a phone gets one header row, the menu opens below it and closes on a
 * page change or Escape).
 */
export function PortalNav({ links, label, menuLabel, children }: { links: { href: string; label: string }[]; label: string; menuLabel: string; children: ReactNode }) {
  const pathname = usePathname();
  const [open, setOpen] = useState(false);
  const panelId = useId();
  useEffect(() => setOpen(false), [pathname]);
  return (
    <>
      <button
        type="button"
        aria-expanded={open}
        aria-controls={panelId}
        onClick={() => setOpen((o) => !o)}
        onKeyDown={(event) => event.key === 'Escape' && setOpen(false)}
        className="ml-auto inline-flex items-center gap-2 rounded-md px-3 py-1.5 text-sm font-medium text-slate-700 ring-1 ring-slate-300 hover:bg-slate-50 lg:hidden"
      >
        <svg aria-hidden viewBox="0 0 20 20" className="h-4 w-4 fill-current">
          {open ? <path d="M5.3 4 10 8.6 14.7 4 16 5.3 11.4 10l4.6 4.7-1.3 1.3-4.7-4.6L5.3 16 4 14.7 8.6 10 4 5.3Z" /> : <path d="M3 5h14v2H3Zm0 4h14v2H3Zm0 4h14v2H3Z" />}
        </svg>
        {menuLabel}
      </button>
      <div
        id={panelId}
        onKeyDown={(event) => event.key === 'Escape' && setOpen(false)}
        className={cx('w-full flex-col gap-3 lg:contents', open ? 'flex' : 'hidden')}
      >
        <nav aria-label={label} className="flex flex-col gap-1 lg:order-last lg:-mx-3 lg:w-full lg:flex-row lg:flex-wrap">
          {links.map((link) => {
            const active = pathname === link.href || pathname.startsWith(`${link.href}/`);
            return (
              <Link
                key={link.href}
                href={link.href}
                aria-current={active ? 'page' : undefined}
                className={cx('rounded-md px-3 py-2 text-sm font-medium lg:py-1.5', active ? 'bg-indigo-50 text-indigo-700' : 'text-slate-700 hover:bg-slate-100')}
              >
                {link.label}
              </Link>
            );
          })}
        </nav>
        <div className="flex flex-wrap items-center gap-3 border-t border-slate-200 pt-3 lg:ml-auto lg:border-0 lg:pt-0">{children}</div>
      </div>
    </>
  );
}
