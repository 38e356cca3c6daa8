/** The console's pages over HTTP: public (they carry no data), locked down by headers, web mode only. */
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../support/start-app.ts';

const KEY = 'pages-test-key-0123456789';
let svc: RunningApp | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

describe('console pages', () => {
  it('serves the console at / and its files without the key, while the API still needs it', async () => {
    svc = await startApp({ server: { auth: { apiKey: KEY } } });
    const page = await fetch(`${svc.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'; script-src 'self'/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await page.text()).toContain('<script type="module" src="/console/main.js">');
    for (const file of [
      'main.js',
      'api.js',
      'chat.js',
      'servers.js',
      'transcript.js',
      'session-fold.js',
      'results.js',
      'live.js',
      'dom.js',
      'backoff.js',
    ]) {
      const res = await fetch(`${svc.url}/console/${file}`);
      expect(res.status, file).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    }
    expect((await fetch(`${svc.url}/console/console.css`)).headers.get('content-type')).toBe('text/css; charset=utf-8');
    expect((await fetch(`${svc.url}/api/sessions`)).status).toBe(401);
  });

  it('serves web/shared beside the console and the inspector, and says whether the inspector is on without failing', async () => {
    svc = await startApp();
    expect(await (await fetch(`${svc.url}/console/live.js`)).text()).toContain('export function live(');
    const off = await fetch(`${svc.url}/inspect/status.json`);
    expect(off.status).toBe(200);
    expect(off.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(await off.json()).toEqual({ enabled: false });
    expect((await fetch(`${svc.url}/inspect`)).status).toBe(400); // the page itself still says how to turn it on
    await svc.stop();
    svc = await startApp({ server: { inspect: true } });
    expect(await (await fetch(`${svc.url}/inspect/status.json`)).json()).toEqual({ enabled: true });
    expect((await fetch(`${svc.url}/inspect/live.js`)).status).toBe(200);
  });

  it('serves only the files of web/console', async () => {
    svc = await startApp();
    for (const path of [
      '/console/nope.js',
      '/console/..%2F..%2Fpackage.json',
      '/console/%2E%2E%2Fconsole%2Findex.html',
    ]) {
      const res = await fetch(`${svc.url}${path}`);
      expect(res.status, path).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    }
  });

  it('is not served in --mode mcp', async () => {
    svc = await startApp({}, { deps: { mode: 'mcp' } });
    expect((await fetch(`${svc.url}/`)).status).toBe(404);
    expect((await fetch(`${svc.url}/api/health`)).status).toBe(200);
  });
});
