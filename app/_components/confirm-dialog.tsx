'use client';
// A confirm step for a destructive action: the native modal dialog (focus moves into it and stays
// there, Escape closes it, focus returns to the button that opened it), never window.confirm.
import { useEffect, useId, useRef, type ReactNode } from 'react';
import { Button } from '~/app/_components/ui';

export function ConfirmDialog({ open, title, children, confirmLabel, cancelLabel, onConfirm, onClose }: { open: boolean; title: string; children: ReactNode; confirmLabel: string; cancelLabel: string; onConfirm: () => void; onClose: () => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const textId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      aria-describedby={textId}
      onClose={onClose}
      className="m-auto w-[calc(100%-2rem)] max-w-md rounded-lg bg-white p-5 text-slate-900 shadow-xl ring-1 ring-slate-200 backdrop:bg-slate-900/40"
    >
      <h2 id={titleId} className="text-base font-semibold">
        {title}
      </h2>
      <div id={textId} className="mt-2 text-sm text-slate-700">
        {children}
      </div>
      <div className="mt-5 flex flex-wrap justify-end gap-3">
        <Button variant="secondary" autoFocus onClick={onClose}>
          {cancelLabel}
        </Button>
        <Button variant="danger" onClick={onConfirm}>
          {confirmLabel}
        </Button>
      </div>
    </dialog>
  );
}
