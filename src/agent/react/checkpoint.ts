/**
 * One session's reaction checkpoint (`{ seqs: { <reaction>: seq } }`, reactions.ts) as the record store keeps it. It
 * only moves forward, as Emmett's processors' checkpoints do: a write is conditioned on the version last read or
 * written; on a mismatch (another owner of the session wrote since: a takeover) the newer checkpoint is read, each
 * reaction's seq raised to the larger of the two (in the caller's `seqs`, so what it covers is not handled again), and
 * the write tried again. A newer checkpoint is never written over.
 */
import { z } from 'zod';
import type { records } from '../../store/index.ts';

export const checkpointSchema = z.object({ seqs: z.record(z.string(), z.number()) });
type Seqs = Record<string, number>;

/** Conditioned writes tried before a write fails (each mismatch reads the newer checkpoint first). */
const WRITE_ATTEMPTS = 5;

export const sessionCheckpoint = (checkpoints: records.Collection<{ seqs: Seqs }>, sessionId: string) =>
  new SessionCheckpoint(checkpoints, sessionId);

/** One per session; its methods are on the prototype. */
export class SessionCheckpoint {
  /** The version last read or written (0: none kept), and the seqs it holds. */
  private version = 0;
  private written = '';
  private readonly checkpoints: records.Collection<{ seqs: Seqs }>;
  private readonly sessionId: string;

  constructor(checkpoints: records.Collection<{ seqs: Seqs }>, sessionId: string) {
    this.checkpoints = checkpoints;
    this.sessionId = sessionId;
  }

  /** The kept seqs, if any; the next write is conditioned on their version. */
  async read(): Promise<Seqs | undefined> {
    const kept = await this.checkpoints.get(this.sessionId);
    this.version = kept?.version ?? 0;
    this.written = kept ? JSON.stringify(kept.value.seqs) : '';
    return kept?.value.seqs;
  }

  /** Writes `seqs` unless they are what is kept; true when it wrote. Rejects when the checkpoint kept changing. */
  async write(seqs: Seqs): Promise<boolean> {
    for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
      const value = JSON.stringify(seqs);
      if (value === this.written || value === '{}') return false;
      if (await this.checkpoints.put(this.sessionId, { seqs: { ...seqs } }, { ifVersion: this.version })) {
        [this.written, this.version] = [value, this.version + 1];
        return true;
      }
      for (const [name, seq] of Object.entries((await this.read()) ?? {}))
        if (seq > (seqs[name] ?? 0)) seqs[name] = seq;
    }
    throw new Error(`the reactions' checkpoint of ${this.sessionId} kept changing under its write`);
  }
}
