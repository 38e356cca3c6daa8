/**
 * Storage faults lose nothing silently: the real CLI runs with its data directory on a tmpfs of
 * its own mount namespace (`unshare -m`, as root), which the test turns read-only and back with
 * `nsenter`. A turn whose facts cannot be stored fails (500 AGENT_ERROR, details.reason storage),
 * health says degraded with the cause (and the readiness probe 503), the history stays as it was, and all of it recovers once
 * appends succeed again. Skipped, with a notice, where mount namespaces are not available.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type Simulator } from '../../tools/simulator/index.ts';
import { api } from '../support/messaging.ts';
import { testRunEnv } from '../support/process-ledger.ts';
import { AGENTD_BIN } from '../support/paths.ts';

function canUnshare(): boolean {
  try {
    execFileSync('unshare', ['-m', 'true'], { stdio: 'ignore' });
    execFileSync('nsenter', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const available = canUnshare();
if (!available) console.warn('storage-faults: SKIPPED — needs root with `unshare -m` and `nsenter` (mount namespaces)');

describe.skipIf(!available)('storage faults (read-only data directory)', () => {
  let sim: Simulator;
  let dataDir: string;
  let child: ReturnType<typeof spawn>;
  let base: string;
  const remount = (mode: 'ro' | 'rw') =>
    execFileSync('nsenter', ['-t', String(child.pid), '-m', 'mount', '-o', `remount,${mode}`, dataDir]);

  beforeAll(async () => {
    sim = await startSimulator();
    const dir = await mkdtemp(join(tmpdir(), 'agentd-storage-'));
    dataDir = join(dir, 'data');
    execFileSync('mkdir', ['-p', dataDir]);
    const agent = join(dir, 'agent.yml');
    await writeFile(
      agent,
      `llm:\n  provider: openai-compatible\n  baseURL: ${sim.url}\n  model: sim\n  apiKey: k\nstorage:\n  type: jsonl\n  dir: ${dataDir}/sessions\n`,
    );
    child = spawn(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        'mount -t tmpfs -o size=1m tmpfs "$0" && exec "$@"',
        dataDir,
        process.execPath,
        AGENTD_BIN,
        '--agent',
        agent,
        '--web-port',
        '0',
      ],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...testRunEnv() },
      },
    );
    let out = '';
    base = await new Promise<string>((resolve, reject) => {
      child.stdout?.on('data', (d: Buffer) => {
        out += d.toString();
        const port = /"port":(\d+).*listening/.exec(out)?.[1];
        if (port) resolve(`http://127.0.0.1:${port}`);
      });
      child.once('exit', (code) => reject(new Error(`agentd exited ${code}: ${out}`)));
    });
  });
  afterAll(async () => {
    child?.kill('SIGTERM');
    await sim?.close();
  });

  it('fails the turn, degrades health, keeps the history, and recovers', async () => {
    // Read-only before the first write: no file is open for writing, so the remount is allowed.
    remount('ro');
    const failed = await api(base, 'POST', '/api/message-sync', { message: 'never stored' });
    expect(failed.status).toBe(500);
    expect(failed.body.error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'storage', cause: 'EROFS' } });
    const health = (await api(base, 'GET', '/api/health')).body;
    expect(health.agent).toMatchObject({ status: 'degraded', cause: 'storage: EROFS', since: expect.any(String) });
    const notReady = await api(base, 'GET', '/api/health/ready');
    expect(notReady.status).toBe(503);
    expect(notReady.body.error).toMatchObject({
      code: 'SERVICE_UNAVAILABLE',
      details: { reasons: [{ check: 'store', message: 'the store does not accept writes' }] },
    });
    expect((await api(base, 'GET', '/api/sessions/default/history')).body.events).toEqual([]);
    const reset = await api(base, 'POST', '/api/reset', {});
    expect(reset.status).toBe(500);
    expect(reset.body.error.details).toMatchObject({ reason: 'storage', cause: 'EROFS' });

    remount('rw');
    const again = await api(base, 'POST', '/api/message-sync', { message: 'stored' });
    expect(again.status).toBe(200);
    expect((await api(base, 'GET', '/api/health')).body.agent.status).toBe('ready');
    expect((await api(base, 'GET', '/api/health/ready')).status).toBe(200);
    const after = (await api(base, 'GET', '/api/sessions/default/history')).body.events;
    expect(after.map((f: any) => [f.data.seq, f.data.content])).toEqual([
      [1, 'stored'],
      [2, 'You said: stored'],
    ]);
  });

  it('a full disk mid-session fails the turn without a frame whose seq is not on disk; freeing space recovers', async () => {
    const session = { sessionId: 'full' };
    expect((await api(base, 'POST', '/api/message-sync', { ...session, message: 'small' })).status).toBe(200);
    const fill = join(dataDir, 'fill');
    execFileSync('nsenter', [
      '-t',
      String(child.pid),
      '-m',
      'sh',
      '-c',
      `dd if=/dev/zero of=${fill} bs=4k 2>/dev/null; true`,
    ]);
    const big = 'x'.repeat(64 * 1024);
    const failed = await api(base, 'POST', '/api/message-sync', { ...session, message: big });
    expect(failed.status).toBe(500);
    expect(failed.body.error).toMatchObject({ code: 'AGENT_ERROR', details: { reason: 'storage', cause: 'ENOSPC' } });
    expect((await api(base, 'GET', '/api/health')).body.agent).toMatchObject({
      status: 'degraded',
      cause: 'storage: ENOSPC',
    });
    expect((await api(base, 'GET', '/api/sessions/full/history')).body.events.map((f: any) => f.data.seq)).toEqual([
      1, 2,
    ]);

    execFileSync('nsenter', ['-t', String(child.pid), '-m', 'rm', fill]);
    expect((await api(base, 'POST', '/api/message-sync', { ...session, message: 'after' })).body.response).toBe(
      'You said: after',
    );
    expect((await api(base, 'GET', '/api/health')).body.agent.status).toBe('ready');
    expect(
      (await api(base, 'GET', '/api/sessions/full/history')).body.events.map((f: any) => [f.data.seq, f.event]),
    ).toEqual([
      [1, 'userMessage'],
      [2, 'response'],
      [3, 'userMessage'],
      [4, 'response'],
    ]);
  });
});
