/** The group reaper (src/tools/spawn/group-reaper.ts): its script on its own, and the restart agentd does when it dies. */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { REAPER_SCRIPT } from '../../src/tools/spawn/group-reaper.ts';
import { ROOT } from '../support/paths.ts';
import { testRunEnv } from '../support/process-ledger.ts';
import { until } from '../support/wait.ts';

const stat = (pid: number) => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'latin1')
      .replace(/^.*\) /s, '')
      .split(' ');
    return { state: fields[0], pgrp: Number(fields[2]), start: Number(fields[19]) };
  } catch {
    return undefined;
  }
};
/** Whether `pid` ignores SIGTERM (bit 15 of SigIgn in /proc/<pid>/status). */
const ignoresTerm = (pid: number) => {
  const mask = /^SigIgn:\s*([0-9a-f]+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1];
  return mask !== undefined && (BigInt(`0x${mask}`) & (1n << 14n)) !== 0n;
};
const running = (pid: number) => (stat(pid)?.state ?? 'Z') !== 'Z';
const inGroup = (pgid: number) =>
  readdirSync('/proc').filter((e) => /^\d+$/.test(e) && stat(Number(e))?.pgrp === pgid && running(Number(e)));
const kill = (pid: number) => {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // gone
  }
};

describe.runIf(process.platform === 'linux')('group reaper', () => {
  const started: ChildProcess[] = [];
  const groups: number[] = [];
  afterEach(() => {
    for (const pgid of groups.splice(0)) kill(-pgid);
    for (const c of started.splice(0)) if (c.pid !== undefined) kill(c.pid);
  });

  /** A process group of a shell ignoring TERM and its `sleep`, as agentd starts a server (a session of its own). */
  const group = (): number => {
    const leader = spawn('/bin/sh', ['-c', "trap '' TERM; sleep 300 & wait"], { detached: true, stdio: 'ignore' });
    started.push(leader);
    groups.push(leader.pid!);
    return leader.pid!;
  };

  it("at its pipe's end kills each listed group whose leader is the listed process, ignoring TERM until then", async () => {
    const [listed, wrongStart, unlisted] = [group(), group(), group()];
    await until(
      () => [listed, wrongStart, unlisted].every((g) => inGroup(g).length === 2),
      'each group: a shell and its sleep',
    );
    const reaper = spawn('/bin/sh', ['-c', REAPER_SCRIPT], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    started.push(reaper);
    const exited = once(reaper, 'exit');
    reaper.stdin.write(
      `+ ${listed} ${stat(listed)!.start}\n+ ${wrongStart} ${stat(wrongStart)!.start + 1}\n+ ${unlisted} ${stat(unlisted)!.start}\n`,
    );
    reaper.stdin.write(`- ${unlisted} ${stat(unlisted)!.start}\n+ junk line\n+ 1\n`);
    await until(() => ignoresTerm(reaper.pid!), 'the reaper ignoring TERM (its trap run)');
    reaper.kill('SIGTERM');
    await sleep(200);
    expect(reaper.exitCode).toBeNull(); // TERM ignored: only the pipe's end counts
    reaper.stdin.end();
    expect(await exited).toEqual([0, null]);
    await until(() => inGroup(listed).length === 0, 'the listed group gone');
    expect([inGroup(wrongStart).length, inGroup(unlisted).length]).toEqual([2, 2]); // another process, and one unlisted: left alone
  });

  it('is started again when it dies, told of the groups still watched, and reaps them when its agentd is killed', async () => {
    // A stand-in for agentd: starts a group and its reaper, kills the reaper, waits for the next one, reports.
    const dir = await mkdtemp(join(tmpdir(), 'agentd-reaper-unit-'));
    const script = join(dir, 'owner.mjs');
    await writeFile(
      script,
      `
      import { spawn } from 'node:child_process';
      import { createGroupReaper } from ${JSON.stringify(`${ROOT}src/tools/spawn/group-reaper.ts`)};
      const reaper = createGroupReaper();
      reaper.start();
      const first = reaper.pid;
      const leader = spawn('/bin/sh', ['-c', "trap '' TERM; sleep 300 & wait"], { detached: true, stdio: 'ignore' });
      reaper.watch(leader.pid);
      process.kill(first, 'SIGKILL');
      const poll = setInterval(() => {
        if (reaper.pid === undefined || reaper.pid === first) return;
        clearInterval(poll);
        process.stdout.write(JSON.stringify({ group: leader.pid, first, second: reaper.pid }) + '\\n');
      }, 20);
      setInterval(() => {}, 60000);
    `,
    );
    const owner = spawn(process.execPath, ['--import', 'tsx', script], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH, ...testRunEnv() },
    });
    started.push(owner);
    let out = '';
    owner.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await until(
      () => out.includes('\n'),
      () => `the owner reports its group and reapers: ${out}`,
    );
    const { group: pgid, first, second } = JSON.parse(out) as { group: number; first: number; second: number };
    groups.push(pgid);
    expect(running(first)).toBe(false);
    expect(inGroup(pgid)).toHaveLength(2); // the first reaper died without killing anything
    owner.kill('SIGKILL');
    await until(() => inGroup(pgid).length === 0, 'the group gone', { timeout: 5_000 });
    await until(() => !running(second), 'the second reaper gone', { timeout: 5_000 });
  });
});
