'use client';
// Whether the page has hydrated: false in the server's HTML and until React has attached its handlers,
// so a button that acts through JavaScript can stay disabled until a click would do something
// (a click on the server's HTML before that is lost; Playwright's click waits for the button to enable).
import { useSyncExternalStore } from 'react';

const subscribe = () => () => {};

export function useHydrated(): boolean {
  return useSyncExternalStore(
    subscribe,
    () => true,
    () => false,
  );
}
