// Reading the server's error shape on the client: the message and the errors per field.
import { TRPCClientError } from '@trpc/client';

export interface FormErrors {
  /** A message for the whole form, set when no shown field carries the error. */
  message?: string;
  fields: Record<string, string>;
}

/** formErrors extracts per-field messages for the fields a form shows, and a form-level message for the rest. */
export function formErrors(error: unknown, shownFields: readonly string[]): FormErrors {
  if (error instanceof TRPCClientError) {
    const data = error.data as { fieldErrors?: Record<string, string> } | undefined;
    const fields = data?.fieldErrors ?? {};
    const covered = Object.keys(fields).some((f) => shownFields.includes(f));
    return { message: covered ? undefined : error.message, fields };
  }
  return { message: error instanceof Error ? error.message : String(error), fields: {} };
}
