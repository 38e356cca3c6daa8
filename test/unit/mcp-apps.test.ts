/**
 * The host side of MCP Apps, piece by piece (src/tools/mcp/app-resource.ts, src/http/routes/app-routes.ts): the
 * capability declared, a tool's `_meta.ui` and visibility read, a resource read into an app or a note, its `_meta.ui`
 * checked (a CSP entry that is no origin never reaches a header), and the policy an app is served under.
 */
import type { ReadResourceResult, Tool } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config/index.ts';
import { checkSessionEvent } from '../../src/conversation/session-events.ts';
import { appCsp } from '../../src/http/routes/app-routes.ts';
import { appCapability } from '../../src/tools/mcp/app-capability.ts';
import { appResourceUri, appUiOf, hiddenFromModel, readToolApp, toolUi } from '../../src/tools/mcp/app-resource.ts';

const MIME = 'text/html;profile=mcp-app';
const tool = (meta?: Record<string, unknown>): Tool => ({
  name: 't',
  inputSchema: { type: 'object' },
  ...(meta && { _meta: meta }),
});
const serverConfig = (apps?: unknown) =>
  parseConfig({
    llm: { provider: 'openai-compatible', baseURL: 'http://127.0.0.1:1/v1', model: 'm' },
    mcpServers: { s: { type: 'stdio', command: 'x', ...(apps !== undefined && { apps }) } },
  }).mcpServers.s!;
const reading = (result: ReadResourceResult | Error) => ({
  readResource: (_uri: string) => (result instanceof Error ? Promise.reject(result) : Promise.resolve(result)),
});

describe('MCP Apps: what a tool says', () => {
  it('declares the extension with its MIME type unless the server is configured apps: false', () => {
    const declared = { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } } };
    expect(appCapability(serverConfig())).toEqual(declared);
    expect(appCapability(serverConfig({ maxBytes: 10 }))).toEqual(declared);
    expect(appCapability(serverConfig(false))).toEqual({});
  });

  it("reads a tool's resourceUri, the deprecated flat key too, and only a ui:// one", () => {
    expect(appResourceUri(tool({ ui: { resourceUri: 'ui://a/v.html' } }))).toBe('ui://a/v.html');
    expect(appResourceUri(tool({ 'ui/resourceUri': 'ui://a/old.html' }))).toBe('ui://a/old.html');
    expect(toolUi(tool({ 'ui/resourceUri': 'ui://a/old.html' }))).toEqual({ resourceUri: 'ui://a/old.html' });
    expect(appResourceUri(tool({ ui: { resourceUri: 'https://a.example/v.html' } }))).toBeUndefined();
    expect(toolUi(tool({ ui: { resourceUri: 'file:///x', visibility: ['app'] } }))).toEqual({ visibility: ['app'] });
    expect(toolUi(tool())).toBeUndefined();
  });

  it('hides from the model a tool whose visibility leaves the model out, and only such a tool', () => {
    expect(hiddenFromModel(tool({ ui: { visibility: ['app'] } }))).toBe(true);
    expect(hiddenFromModel(tool({ ui: { visibility: [] } }))).toBe(true);
    expect(hiddenFromModel(tool({ ui: { visibility: ['model', 'app'] } }))).toBe(false);
    expect(hiddenFromModel(tool({ ui: { visibility: 'app' } }))).toBe(false); // not a list: the default
    expect(hiddenFromModel(tool({ ui: { resourceUri: 'ui://a' } }))).toBe(false);
  });
});

describe('MCP Apps: what a resource gives', () => {
  const uri = 'ui://a/v.html';

  it('keeps the html, from text or a base64 blob, with its checked _meta.ui (the content item first)', async () => {
    const ui = { csp: { connectDomains: ['https://api.example.com'] }, prefersBorder: false };
    expect(
      await readToolApp(reading({ contents: [{ uri, mimeType: MIME, text: '<p>x</p>', _meta: { ui } }] }), uri, 100),
    ).toEqual({ resourceUri: uri, mimeType: MIME, html: '<p>x</p>', ui });
    const blob = Buffer.from('<p>é</p>').toString('base64');
    expect(
      await readToolApp(
        reading({ contents: [{ uri, mimeType: 'text/html; profile=mcp-app', blob }], _meta: { ui } }),
        uri,
        100,
      ),
    ).toEqual({ resourceUri: uri, mimeType: MIME, html: '<p>é</p>', ui });
  });

  it('notes why there is no app: unreadable, of another type, empty, too large (counted in UTF-8 bytes)', async () => {
    const note = async (result: ReadResourceResult | Error, max = 100) =>
      ((await readToolApp(reading(result), uri, max)) as { note?: string }).note;
    expect(await note(new Error('Resource not found'))).toBe(
      `No app shown: its resource ${uri} could not be read (Resource not found)`,
    );
    expect(await note({ contents: [{ uri, mimeType: 'text/html', text: 'x' }] })).toBe(
      `No app shown: its resource is text/html, not ${MIME}`,
    );
    expect(await note({ contents: [] })).toBe(`No app shown: its resource ${uri} has no contents`);
    expect(await note({ contents: [{ uri, mimeType: MIME, text: 'ééé' }] }, 5)).toBe(
      'No app shown: its resource is 6 bytes, more than the 5 kept',
    );
  });

  it('keeps of _meta.ui only the origins, the known permissions, a host name and the border preference', () => {
    expect(
      appUiOf({
        csp: {
          connectDomains: ['https://api.example.com', 'wss://live.example.com:8443', "'self'", '*'],
          resourceDomains: ['https://*.cdn.example.com/lib/', 'https://x.example.com; script-src *', 'data:', 7],
          frameDomains: 'https://one.example.com',
          baseUriDomains: ['https://a.example.com/ b'],
          scriptDomains: ['https://ignored.example.com'],
        },
        permissions: { camera: {}, microphone: true, clipboardWrite: {}, usb: {} },
        domain: 'abc.example-apps.com',
        prefersBorder: 'yes',
      }),
    ).toEqual({
      csp: {
        connectDomains: ['https://api.example.com', 'wss://live.example.com:8443'],
        resourceDomains: ['https://*.cdn.example.com/lib/'],
        baseUriDomains: [],
      },
      permissions: { camera: {}, clipboardWrite: {} },
      domain: 'abc.example-apps.com',
    });
    expect(appUiOf({ domain: 'evil.com; x' })).toBeUndefined();
    expect(appUiOf('csp')).toBeUndefined();
    const many = Array.from({ length: 40 }, (_, i) => `https://h${i}.example.com`);
    expect(appUiOf({ csp: { connectDomains: many } })?.csp?.connectDomains).toHaveLength(32);
  });
});

describe('MCP Apps: what the log keeps', () => {
  const withCsp = (connectDomains: string[]) => ({
    v: 4,
    type: 'toolResult',
    ...{ turnId: 't', callId: 'c', toolName: 'x', serverId: 's', success: true, result: {}, text: '', durationMs: 1 },
    app: { resourceUri: 'ui://a/v.html', mimeType: MIME, html: '<p>x</p>', ui: { csp: { connectDomains } } },
  });

  it('refuses a stored app (an import) whose CSP names anything but origins, and reads one that names origins', () => {
    expect(checkSessionEvent(withCsp(['https://api.example.com']))).toMatchObject({ ok: true });
    for (const bad of ['https://a.example.com; script-src *', "'self'", '*', 'data:'])
      expect(checkSessionEvent(withCsp([bad])), bad).toMatchObject({
        ok: false,
        issue: expect.stringMatching(/^event\.app/),
      });
  });
});

describe('MCP Apps: the policy an app is served under', () => {
  it("is the specification's restrictive default without declared origins, with no 'self' and an opaque origin", () => {
    expect(appCsp(undefined)).toBe(
      [
        "default-src 'none'",
        "script-src 'unsafe-inline'",
        "style-src 'unsafe-inline'",
        'img-src data:',
        'media-src data:',
        "font-src 'none'",
        "connect-src 'none'",
        "frame-src 'none'",
        "base-uri 'none'",
        "object-src 'none'",
        "form-action 'none'",
        'sandbox allow-scripts allow-forms',
      ].join('; '),
    );
  });

  it('opens each directive to the origins declared for it, and no other', () => {
    const csp = appCsp({
      csp: {
        connectDomains: ['https://api.example.com'],
        resourceDomains: ['https://cdn.example.com', 'https://*.fonts.example.com'],
        frameDomains: ['https://www.youtube.com'],
        baseUriDomains: ['https://cdn.example.com'],
      },
    }).split('; ');
    const both = 'https://cdn.example.com https://*.fonts.example.com';
    expect(csp).toEqual(
      expect.arrayContaining([
        `script-src 'unsafe-inline' ${both}`,
        `style-src 'unsafe-inline' ${both}`,
        `img-src data: ${both}`,
        `font-src ${both}`,
        'connect-src https://api.example.com',
        'frame-src https://www.youtube.com',
        'base-uri https://cdn.example.com',
      ]),
    );
  });
});
