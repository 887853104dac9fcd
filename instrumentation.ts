// Runs once when the server starts (see server/startup.ts).
export async function register() {
  if (process.env.NEXT_RUNTIME === 'nodejs') {
    const { startPortal } = await import('./server/startup');
    await startPortal();
  }
}
