/**
 * A JSONL storage directory belongs to one agentd at a time: a second one over it would replay and remove the
 * first's journal, delete its files in the making and number the same sessions' events twice. `.agentd-lock` names
 * the holder (pid, a token of the process's run, its start time and the machine's boot on Linux, host, since when).
 * - Taking the lock refuses (SERVICE_UNAVAILABLE, `details.reason: "in-use"`) while its holder runs: another process
 *   on this machine, or another store in this process.
 * - A lock whose holder is gone (a crash, `kill -9`, a container's earlier run) is taken over. On Linux the holder is
 *   the process with that pid *and* start time in this boot, so a pid reused since does not keep the lock; elsewhere
 *   a running process with that pid does. Locks cannot see across machines, nor across containers with their own
 *   process namespaces: each needs its own directory there.
 */
import { randomUUID } from 'node:crypto';
import { link, rename, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { AppError } from '../errors/index.ts';
import { alive, systemProcs } from '../procs.ts';
import { errno, readTrimmed, writeNewFile } from './jsonl-file.ts';

export const LOCK_FILE = '.agentd-lock';

const Holder = z.object({
  pid: z.number().int().positive(),
  /** Linux: the process's start time (clock ticks after boot) and the boot's id; absent elsewhere. */
  started: z.number().int().optional(),
  boot: z.string().optional(),
  run: z.string(),
  host: z.string(),
  since: z.string(),
});
type Holder = z.infer<typeof Holder>;

/** This process among all that ever had its pid: a lock naming it is held by one of its stores. */
const THIS_RUN = randomUUID();

function me(): Holder {
  return {
    pid: process.pid,
    started: systemProcs.stat(process.pid)?.start,
    boot: systemProcs.bootId(),
    run: THIS_RUN,
    host: hostname(),
    since: new Date().toISOString(),
  };
}

function running(holder: Holder): boolean {
  if (holder.pid === process.pid) return holder.run === THIS_RUN; // else another run's, its pid reused by this one
  if (holder.started !== undefined && holder.boot !== undefined) {
    const stat = systemProcs.stat(holder.pid);
    return holder.boot === systemProcs.bootId() && stat?.start === holder.started && stat.state !== 'Z';
  }
  return alive(systemProcs, holder.pid);
}

async function holderOf(path: string): Promise<Holder | undefined> {
  const text = await readTrimmed(path);
  if (text === undefined) return undefined;
  try {
    return Holder.parse(JSON.parse(text));
  } catch {
    return undefined; // unreadable (a crash while it was written): nobody holds it
  }
}

function inUse(dir: string, holder: Holder): AppError {
  const who = holder.pid === process.pid ? 'this process' : `process ${holder.pid} on ${holder.host}`;
  return new AppError(
    'SERVICE_UNAVAILABLE',
    `storage directory ${dir} is in use by another agentd (${who}, since ${holder.since}): a directory holds one ` +
      `agentd's sessions at a time; give this one its own storage.dir, or share sessions through Redis`,
    { dir, reason: 'in-use', pid: holder.pid, host: holder.host, since: holder.since },
  );
}

export interface DirLock {
  /** Gives the directory up (removes the lock file when it is still this one's). */
  release(): Promise<void>;
}

/** Takes `dir` for this store; rejects with `in-use` while another holds it. */
export async function lockDir(dir: string, sync: boolean): Promise<DirLock> {
  const path = join(dir, LOCK_FILE);
  const mine = me();
  const text = JSON.stringify(mine);
  const temporary = join(dir, `.agentd-new-lock-${randomUUID()}`); // a crash's leftover goes at a start
  await writeNewFile(temporary, Buffer.from(`${text}\n`, 'utf8'), sync);
  try {
    await link(temporary, path).catch(async (e: unknown) => {
      if (errno(e) !== 'EEXIST') throw e;
      const holder = await holderOf(path);
      if (holder && running(holder)) throw inUse(dir, holder);
      await rename(temporary, path); // the holder is gone: take its place
    });
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
  // Two starts that found the same gone holder both replaced it: the last one's stays, the other yields.
  if ((await readTrimmed(path)) !== text) throw inUse(dir, (await holderOf(path)) ?? mine);
  return {
    async release() {
      if ((await readTrimmed(path).catch(() => undefined)) === text) await unlink(path).catch(() => undefined);
    },
  };
}
