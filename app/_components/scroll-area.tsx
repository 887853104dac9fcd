'use client';
import { useEffect, useRef, useState, type ReactNode } from 'react';

/**
 * ScrollArea scrolls its content sideways inside the card (a wide table on a phone) and, only while it
 * does overflow, is a keyboard stop, so arrow keys scroll it too (WCAG: scrollable regions focusable).
 * It is the containing block of what it holds (`relative`): an absolutely placed child, such as a header
 * cell's screen-reader text, scrolls and is clipped with it instead of widening the page.
 */
export function ScrollArea({ children, className }: { children: ReactNode; className?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  const [overflows, setOverflows] = useState(false);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setOverflows(el.scrollWidth > el.clientWidth + 1);
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    if (el.firstElementChild) observer.observe(el.firstElementChild);
    return () => observer.disconnect();
  }, []);
  return (
    <div ref={ref} tabIndex={overflows ? 0 : undefined} className={`relative overflow-x-auto focus-visible:ring-2 focus-visible:ring-indigo-500 focus-visible:outline-none ${className ?? ''}`}>
      {children}
    </div>
  );
}
