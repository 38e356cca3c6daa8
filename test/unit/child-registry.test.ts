import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { systemProcs, type Procs } from '../../src/procs.ts';
import { createChildRegistry, reapLeftovers, type Entry } from '../../src/tools/spawn/child-registry.ts';
import type { Logger } from '../../src/log/index.ts';

interface FakeProc {
  state?: string;
  pgrp: number;
  start: number;
  cmdline?: string;
}

const BOOT = 'boot-a';
const DEAD_OWNER = 999_999_001;

/** A /proc of `table`'s processes, at time `now` (ticks), recording the groups killed. */
function fakeProcs(table: Record<number, FakeProc>, now = 5_000): Procs & { killed: number[] } {
  const killed: number[] = [];
  return {
    killed,
    stat: (pid) => {
      const p = table[pid];
      return p && { state: p.state ?? 'S', pgrp: p.pgrp, start: p.start };
    },
    cmdline: (pid) => table[pid]?.cmdline ?? '',
    pids: () => Object.keys(table).map(Number),
    bootId: () => BOOT,
    now: () => now,
    exists: (pid) => pid in table,
    killGroup: (pgid) => void killed.push(pgid),
  };
}

const fakeLog = () => ({ warn: vi.fn() }) as unknown as Logger & { warn: ReturnType<typeof vi.fn> };

async function registryFile(children: Partial<Entry>[]): Promise<string> {
  const file = join(await mkdtemp(join(tmpdir(), 'agentd-children-')), 'children.json');
  await writeFile(
    file,
    JSON.stringify({ children: children.map((c) => ({ owner: DEAD_OWNER, command: 'srv', boot: BOOT, ...c })) }),
  );
  return file;
}

const recorded = async (file: string): Promise<Entry[]> =>
  (JSON.parse(await readFile(file, 'utf8')) as { children: Entry[] }).children;

describe('child registry entries', () => {
  it('records the leader start time and boot on add, the first answer as seen, and drops the entry on remove', async () => {
    const file = await registryFile([]);
    const procs = fakeProcs({ 100: { pgrp: 100, start: 4_000 } }, 4_100);
    const registry = createChildRegistry(file, fakeLog(), procs);
    registry.add(100, 'srv');
    expect(await recorded(file)).toEqual([{ pid: 100, command: 'srv', owner: process.pid, start: 4_000, boot: BOOT }]);
    registry.answered(100);
    registry.answered(100); // the first answer only
    expect((await recorded(file))[0]?.seen).toBe(4_100);
    registry.killAll();
    expect(procs.killed).toEqual([100]);
    registry.remove(100);
    expect(await recorded(file)).toEqual([]);
  });
});

describe('reapLeftovers', () => {
  it('kills a running leader that is the recorded process running the recorded command', async () => {
    const file = await registryFile([{ pid: 100, start: 4_000 }]);
    const procs = fakeProcs({ 100: { pgrp: 100, start: 4_000, cmdline: 'srv --stdio' } });
    const log = fakeLog();
    expect(reapLeftovers(file, log, procs)).toBe(1);
    expect(procs.killed).toEqual([100]);
    expect(log.warn.mock.calls[0]?.[1]).toBe('killed a tool server left behind by an agentd that is gone');
    expect(await recorded(file)).toEqual([]);
  });

  it('spares a running leader with another start time (its pid reused) or another command', async () => {
    const file = await registryFile([
      { pid: 100, start: 4_000 },
      { pid: 200, start: 4_000 },
    ]);
    const procs = fakeProcs({
      100: { pgrp: 100, start: 4_500, cmdline: 'srv' },
      200: { pgrp: 200, start: 4_000, cmdline: 'other' },
    });
    expect(reapLeftovers(file, fakeLog(), procs)).toBe(0);
    expect(procs.killed).toEqual([]);
  });

  it('kills a leaderless group when a member started by the time the server first answered', async () => {
    const file = await registryFile([{ pid: 100, start: 4_000, seen: 4_100 }]);
    const procs = fakeProcs({
      100: { state: 'Z', pgrp: 100, start: 4_000 }, // the launcher: dead, not reaped
      101: { pgrp: 100, start: 4_050, cmdline: 'node server.js' }, // its server
      102: { pgrp: 100, start: 4_800 }, // a worker the server forked later
      300: { pgrp: 300, start: 4_050 }, // another group
    });
    const log = fakeLog();
    expect(reapLeftovers(file, log, procs)).toBe(1);
    expect(procs.killed).toEqual([100]);
    expect(log.warn.mock.calls[0]?.[0]).toMatchObject({ pid: 100, members: [101, 102] });
    expect(log.warn.mock.calls[0]?.[1]).toMatch(/launcher left in its process group/);
  });

  it('spares a leaderless group whose members all started after the server first answered (the pgid reused)', async () => {
    const file = await registryFile([{ pid: 100, start: 4_000, seen: 4_100 }]);
    const procs = fakeProcs({ 101: { pgrp: 100, start: 4_101 }, 102: { pgrp: 100, start: 4_900 } });
    expect(reapLeftovers(file, fakeLog(), procs)).toBe(0);
    expect(procs.killed).toEqual([]);
  });

  it('spares a leaderless group when the server never answered, and entries of another boot', async () => {
    const file = await registryFile([
      { pid: 100, start: 4_000 },
      { pid: 200, start: 4_000, seen: 4_100, boot: 'boot-b' },
    ]);
    const procs = fakeProcs({
      101: { pgrp: 100, start: 4_050 },
      200: { pgrp: 200, start: 4_000, cmdline: 'srv' },
      201: { pgrp: 200, start: 4_050 },
    });
    expect(reapLeftovers(file, fakeLog(), procs)).toBe(0);
    expect(procs.killed).toEqual([]);
    expect(await recorded(file)).toEqual([]);
  });

  it("keeps another running agentd's entries", async () => {
    const file = await registryFile([{ pid: 100, start: 4_000, seen: 4_100, owner: 42 }]);
    const procs = fakeProcs({ 42: { pgrp: 42, start: 1 }, 100: { pgrp: 100, start: 4_000, cmdline: 'srv' } });
    expect(reapLeftovers(file, fakeLog(), procs)).toBe(0);
    expect(await recorded(file)).toHaveLength(1);
  });
});

describe.runIf(process.platform === 'linux')('systemProcs', () => {
  it("reads this process's state and start time, and now on the same clock", () => {
    const self = systemProcs.stat(process.pid);
    expect(self?.state).not.toBe('Z');
    expect(self?.start).toBeGreaterThan(0);
    expect(self!.start).toBeLessThanOrEqual(systemProcs.now()!);
    expect(systemProcs.pids()).toContain(process.pid);
    expect(systemProcs.bootId()).toMatch(/^[0-9a-f-]{36}$/);
  });
});
