import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PageTurn } from './page-turn';

describe('PageTurn', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('ends once when the response is sent', () => {
    const leave = vi.fn();
    const turn = new PageTurn(leave, 250);
    turn.begin();
    turn.finish();
    turn.end();
    vi.advanceTimersByTime(1_000);
    turn.finish();
    expect(leave).toHaveBeenCalledTimes(1);
  });

  it('ends shortly after the last call when the response never reports (an abandoned request)', () => {
    const leave = vi.fn();
    const turn = new PageTurn(leave, 250);
    turn.begin();
    turn.begin();
    turn.end();
    vi.advanceTimersByTime(1_000);
    expect(leave).not.toHaveBeenCalled(); // one call still runs
    turn.end();
    vi.advanceTimersByTime(249);
    turn.begin(); // the page asks for more data: it keeps its turn
    vi.advanceTimersByTime(1_000);
    expect(leave).not.toHaveBeenCalled();
    turn.end();
    vi.advanceTimersByTime(250);
    expect(leave).toHaveBeenCalledTimes(1);
  });

  it('ends after the grace period when the page makes no call at all', () => {
    const leave = vi.fn();
    new PageTurn(leave, 250);
    vi.advanceTimersByTime(250);
    expect(leave).toHaveBeenCalledTimes(1);
  });
});
