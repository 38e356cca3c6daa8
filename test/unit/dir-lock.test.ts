import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LOCK_FILE, lockDir } from '../../src/store/dir-lock.ts';

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'agentd-dir-lock-'));
  dirs.push(dir);
  return dir;
}
const holderIn = async (dir: string) => JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as { pid: number };

/** Another running process, as the lock would name it if it held the directory. */
async function anotherProcess() {
  const child = spawn('sleep', ['60'], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('spawn', resolve));
  const stat = await readFile(`/proc/${child.pid}/stat`, 'utf8');
  const holder = {
    pid: child.pid!,
    started: Number(stat.split(') ').at(-1)!.split(' ')[19]),
    boot: (await readFile('/proc/sys/kernel/random/boot_id', 'utf8')).trim(),
    run: 'its-run',
    host: 'elsewhere',
    since: '2026-11-28T00:00:00.000Z',
  };
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return { holder, end: () => (child.kill('SIGKILL'), exited) };
}

describe.skipIf(process.platform !== 'linux')('a storage directory lock', () => {
  it('is taken by one store of this process at a time, and given up', async () => {
    const dir = await tempDir();
    const lock = await lockDir(dir, false);
    expect((await holderIn(dir)).pid).toBe(process.pid);
    await expect(lockDir(dir, false)).rejects.toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { reason: 'in-use', pid: process.pid },
    });
    await lock.release();
    await expect(readFile(join(dir, LOCK_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
    await (await lockDir(dir, false)).release();
  });

  it('is refused while another process holds it, naming it, and taken over once that process is gone', async () => {
    const dir = await tempDir();
    const other = await anotherProcess();
    await writeFile(join(dir, LOCK_FILE), JSON.stringify(other.holder));
    const refused = lockDir(dir, false);
    await expect(refused).rejects.toMatchObject({ details: { reason: 'in-use', pid: other.holder.pid } });
    await expect(refused).rejects.toThrow(`in use by another agentd (process ${other.holder.pid} on elsewhere`);
    await other.end(); // as a crash or kill -9 leaves it
    const lock = await lockDir(dir, false);
    expect((await holderIn(dir)).pid).toBe(process.pid);
    await lock.release();
  });

  it('is taken over from a process whose pid runs again for another process (a restart, a container run)', async () => {
    const dir = await tempDir();
    const other = await anotherProcess();
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ ...other.holder, started: 1 }));
    const lock = await lockDir(dir, false); // that pid runs, but started at another time: not the holder
    await other.end();
    await lock.release();
  });

  it('is taken over when its file holds no holder (a crash while it was written)', async () => {
    const dir = await tempDir();
    await writeFile(join(dir, LOCK_FILE), '{"pid":');
    const lock = await lockDir(dir, false);
    expect((await holderIn(dir)).pid).toBe(process.pid);
    await lock.release();
  });
});
