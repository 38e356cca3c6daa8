/**
 * The store's mark of a session's open turn (`markOpenTurn`: what a restart, or a cluster's sweep, resumes), kept in
 * step with the session's log.
 *
 * Contracts:
 * - `open(beside)` writes the mark unless it was asked for since it was last removed, handing `beside` the write
 *   when there is one; `close(after)` removes it unless it is removed already, once `after` resolved true (the
 *   reactions to the turn's facts settled, none stuck: a restart before then, or after a reaction failed, finds the
 *   session and catches them up) and unless a turn opened meanwhile; `sync(open)` writes what the log says
 *   whatever was asked before (at open: a mark a crash left behind, or that of a turn about to be resumed).
 * - `ready()` resolves once the last write asked for settled, or, when `beside` took it, once what `beside` answered
 *   settled (the outbox's gate: the facts written beside the mark are stored too). Writes never reject (the writer
 *   logs a failure): a mark that was not written leaves its turn to be resumed when its session is next used.
 * - Without a writer (turns do not resume) nothing is written and `ready()` is resolved.
 */
export const createOpenMark = (write: ((open: boolean) => Promise<void>) | undefined): OpenMark => new OpenMark(write);

/** One per session; its methods are on the prototype. */
export class OpenMark {
  private marked = false;
  private last: Promise<void> = Promise.resolve();
  /** Counts opens: a close waiting for `after` lets go of the mark only if no turn opened meanwhile. */
  private opens = 0;
  private readonly write: ((open: boolean) => Promise<void>) | undefined;

  constructor(write: ((open: boolean) => Promise<void>) | undefined) {
    this.write = write;
  }

  /** `beside`: given the write when there is one (the outbox's gate, passed once the facts beside it are stored). */
  open(beside?: (write: Promise<void>) => Promise<void>): void {
    this.opens++;
    const writing = this.marked ? undefined : this.put(true);
    if (writing && beside) this.last = beside(writing);
  }

  close(after?: Promise<boolean>): void {
    if (!after) return void (this.marked && this.put(false));
    const at = this.opens;
    void after.then((caughtUp) => {
      if (caughtUp && this.opens === at && this.marked) void this.put(false);
    });
  }

  sync(open: boolean): void {
    void this.put(open);
  }

  ready(): Promise<void> {
    return this.last;
  }

  private put(open: boolean): Promise<void> | undefined {
    this.marked = open;
    if (!this.write) return undefined;
    this.last = this.write(open);
    return this.last;
  }
}
