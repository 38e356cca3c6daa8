/**
 * What the console needs to host MCP Apps, over HTTP (src/http/routes/app-host-routes.ts): the sandbox proxy page,
 * public, under the app's CSP (origins only, checked like a stored `_meta.ui.csp`) with `sandbox` (an opaque origin)
 * and only agentd's pages as its ancestors; ext-apps' host side as one browser module; the console allowed to frame
 * its own origin's proxy and nothing else; neither served in `--mode mcp`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type RunningApp } from '../support/start-app.ts';

const KEY = 'app-host-key-0123456789';
let svc: RunningApp | undefined;
afterEach(async () => {
  await svc?.stop();
  svc = undefined;
});

const csp = (res: Response) => res.headers.get('content-security-policy') ?? '';

describe('console: MCP Apps host routes', () => {
  it('serves the sandbox proxy without the key, sandboxed, under the default CSP or the one its query names', async () => {
    svc = await startApp({ server: { auth: { apiKey: KEY } } });
    const plain = await fetch(`${svc.url}/console/apps/sandbox`);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(csp(plain)).toContain("default-src 'none'");
    expect(csp(plain)).toContain("connect-src 'none'");
    expect(csp(plain)).toContain('sandbox allow-scripts allow-forms');
    expect(csp(plain)).toContain("frame-ancestors 'self'");
    expect(csp(plain)).not.toContain('allow-same-origin');
    expect(await plain.text()).toContain('ui/notifications/sandbox-proxy-ready');

    const declared = { connectDomains: ['https://api.example.com'], resourceDomains: ['https://cdn.example.com'] };
    const named = await fetch(`${svc.url}/console/apps/sandbox?csp=${encodeURIComponent(JSON.stringify(declared))}`);
    expect(named.status).toBe(200);
    expect(csp(named)).toContain('connect-src https://api.example.com;');
    expect(csp(named)).toContain("script-src 'unsafe-inline' https://cdn.example.com;");
  });

  it('refuses a CSP query that is not JSON or names anything but origins', async () => {
    svc = await startApp();
    for (const bad of [
      '{',
      JSON.stringify({ connectDomains: ["https://x.example.com; script-src 'unsafe-eval'"] }),
      JSON.stringify({ connectDomains: ['*'] }),
    ]) {
      const res = await fetch(`${svc.url}/console/apps/sandbox?csp=${encodeURIComponent(bad)}`);
      expect(res.status, bad).toBe(400);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('INVALID_REQUEST');
    }
  });

  it("serves ext-apps' host side as one module, and lets the console frame its own origin only", async () => {
    svc = await startApp();
    const bridge = await fetch(`${svc.url}/console/app-bridge.js`);
    expect(bridge.status).toBe(200);
    expect(bridge.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    const source = await bridge.text();
    expect(source).toMatch(/export\s*\{[^}]*\bas AppBridge\b/);
    expect(source).not.toMatch(/^\s*import\b|\bfrom\s*["']@/m); // no bare import left for the browser to resolve
    expect(csp(await fetch(`${svc.url}/`))).toContain("frame-src 'self'");
  });

  it('serves neither in --mode mcp', async () => {
    svc = await startApp({}, { deps: { mode: 'mcp' } });
    expect((await fetch(`${svc.url}/console/apps/sandbox`)).status).toBe(404);
    expect((await fetch(`${svc.url}/console/app-bridge.js`)).status).toBe(404);
  });
});
