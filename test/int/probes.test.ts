/**
 * The orchestrator probes: `/api/health/live` answers while the process does; `/api/health/ready`
 * answers 503 with the reasons (the spec's envelope, `details.reasons`) while a required tool server
 * is down (the store case is in storage-faults.test.ts, on a real read-only disk). Both need no key.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { fixturePath } from '../support/paths.ts';
import { appPool } from '../support/start-app.ts';
import { until } from '../support/wait.ts';

const pool = appPool();
const KEY = 'probe-test-api-key-0123456789';
const server = (name: string, extra: Record<string, unknown> = {}) => ({
  type: 'stdio',
  command: process.execPath,
  args: [fixturePath(name)],
  timeout: 10_000,
  ...extra,
});

afterAll(async () => {
  await pool.stopAll();
});

async function probe(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url);
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

describe('health probes', () => {
  it('live and ready answer 200 without the key when nothing is required', async () => {
    const svc = await pool.start({ server: { auth: { apiKey: KEY } } });
    expect(await probe(`${svc.url}/api/health/live`)).toEqual({
      status: 200,
      body: { status: 'live', timestamp: expect.any(String) },
    });
    expect(await probe(`${svc.url}/api/health/ready`)).toEqual({
      status: 200,
      body: { status: 'ready', timestamp: expect.any(String) },
    });
    expect((await fetch(`${svc.url}/api/health`)).status).toBe(401); // the full health still needs it
  });

  it('ready is 503 while a required tool server is down, naming it; servers not required do not count', async () => {
    const svc = await pool.start({
      mcpServers: {
        needed: server('exit-server', { required: true }),
        optional: server('exit-server'),
        fine: server('echo-server', { required: true }),
      },
    });
    // Between its attempts (retried with backoff) the failing server is `error`; during one, `connecting`.
    let ready = await probe(`${svc.url}/api/health/ready`);
    await until(
      async () =>
        JSON.stringify((ready = await probe(`${svc.url}/api/health/ready`)).body).includes('"status":"error"'),
      'the required server listed as error',
    );
    const { status, body } = ready;
    expect(status).toBe(503);
    expect(body).toMatchObject({
      success: false,
      error: {
        code: 'SERVICE_UNAVAILABLE',
        message: 'not ready: required tool server needed is error',
        details: { reasons: [{ check: 'toolServer', server: 'needed', status: 'error' }] },
      },
    });
    expect(JSON.stringify(body)).not.toContain('refusing to start'); // the server's own words stay behind the key
    expect((await probe(`${svc.url}/api/health/live`)).status).toBe(200);
    expect((await probe(`${svc.url}/api/health`)).body).toMatchObject({ status: 'healthy' });
  });
});
