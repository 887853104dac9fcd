// A signed-in page's turn of the fair gate (server/api/fair-gate.ts). It ends when the response is
// sent (after()) or, at the latest, shortly after the page's last call: rendering follows its data
// within milliseconds, and a request the browser abandoned mid-render (a quick second click) may
// never report that its response was sent, which would otherwise keep its tenant's turn taken.

/** How long after its last call a page keeps its turn (its rendering) unless it ends before. */
export const PAGE_TURN_GRACE_MS = 250;

export class PageTurn {
  private calls = 0;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private ended = false;

  constructor(
    private readonly leave: () => void,
    private readonly graceMs = PAGE_TURN_GRACE_MS,
  ) {
    this.idle();
  }

  /** A call of the page starts. */
  begin(): void {
    this.calls++;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A call of the page ended (answered or failed). */
  end(): void {
    this.calls = Math.max(0, this.calls - 1);
    if (this.calls === 0) this.idle();
  }

  /** The response was sent: the turn ends now. */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.timer) clearTimeout(this.timer);
    this.leave();
  }

  private idle(): void {
    if (this.ended) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.finish(), this.graceMs);
    this.timer.unref?.();
  }
}
