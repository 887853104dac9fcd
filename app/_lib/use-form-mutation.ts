'use client';
// One way for a client form to send a mutation: read the form, clear the old errors, call, then reset
// the form, refresh the page's server data and say it is done — or show the server's errors on the
// fields the form shows (and the rest above them).
import { useRouter } from 'next/navigation';
import { useState, type FormEvent } from 'react';
import { formErrors, type FormErrors } from './errors';

/**
 * useFormMutation wires a form to a mutation: `read` turns the submitted form into the mutation's
 * input, `fields` are the fields the form shows errors on, `onDone` sees the answer.
 */
export function useFormMutation<TInput, TOutput>(
  mutate: (input: TInput) => Promise<TOutput>,
  { read, fields, onDone }: { read: (form: FormData) => TInput; fields: readonly string[]; onDone?: (output: TOutput) => void },
) {
  const router = useRouter();
  const [errors, setErrors] = useState<FormErrors>({ fields: {} });
  const [done, setDone] = useState(false);
  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const formElement = event.currentTarget;
    setErrors({ fields: {} });
    setDone(false);
    try {
      const output = await mutate(read(new FormData(formElement)));
      formElement.reset();
      setDone(true);
      onDone?.(output);
      router.refresh();
    } catch (error) {
      setErrors(formErrors(error, fields));
    }
  }
  return { errors, done, onSubmit };
}
