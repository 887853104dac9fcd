// The words of the cancel/stop confirmation: a running service is stopped, anything else cancelled,
// and the "no" button keeps what the job is doing now — it runs, or it waits.
import type { MessageKey } from './en';

export interface CancelWording {
  title: MessageKey;
  text: MessageKey;
  confirm: MessageKey;
  keep: MessageKey;
}

/** cancelWording picks the confirmation's texts for a job's kind and state: "Keep it running" only for a job that runs. */
export function cancelWording(kind: string, state: string): CancelWording {
  if (kind === 'inference' && state === 'RUNNING') {
    return { title: 'jobs.confirmStopTitle', text: 'jobs.confirmStopText', confirm: 'jobs.confirmStopYes', keep: 'jobs.confirmKeep' };
  }
  return {
    title: 'jobs.confirmCancelTitle',
    text: 'jobs.confirmCancelText',
    confirm: 'jobs.confirmCancelYes',
    keep: state === 'RUNNING' ? 'jobs.confirmKeep' : 'jobs.confirmKeepWaiting',
  };
}
