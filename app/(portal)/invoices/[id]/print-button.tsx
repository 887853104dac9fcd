'use client';
// Prints the invoice with the browser's print dialog (the print stylesheet hides everything but the document).
import { useT } from '~/app/_components/i18n';
import { Button } from '~/app/_components/ui';

export function PrintButton() {
  const { t } = useT();
  return (
    <Button variant="secondary" onClick={() => window.print()} className="print:hidden">
      {t('invoice.print')}
    </Button>
  );
}
