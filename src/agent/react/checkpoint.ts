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

export function sessionCheckpoint(checkpoints: records.Collection<{ seqs: Seqs }>, sessionId: string) {
  /** The version last read or written (0: none kept), and the seqs it holds. */
  let version = 0;
  let written = '';
  async function read(): Promise<Seqs | undefined> {
    const kept = await checkpoints.get(sessionId);
    version = kept?.version ?? 0;
    written = kept ? JSON.stringify(kept.value.seqs) : '';
    return kept?.value.seqs;
  }
  return {
    /** The kept seqs, if any; the next write is conditioned on their version. */
    read,
    /** Writes `seqs` unless they are what is kept; true when it wrote. Rejects when the checkpoint kept changing. */
    async write(seqs: Seqs): Promise<boolean> {
      for (let attempt = 0; attempt < WRITE_ATTEMPTS; attempt++) {
        const value = JSON.stringify(seqs);
        if (value === written || value === '{}') return false;
        if (await checkpoints.put(sessionId, { seqs: { ...seqs } }, { ifVersion: version })) {
          [written, version] = [value, version + 1];
          return true;
        }
        for (const [name, seq] of Object.entries((await read()) ?? {})) if (seq > (seqs[name] ?? 0)) seqs[name] = seq;
      }
      throw new Error(`the reactions' checkpoint of ${sessionId} kept changing under its write`);
    },
  };
}
