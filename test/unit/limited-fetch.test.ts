import { describe, expect, it } from 'vitest';
import { limitedFetch, ResultTooLarge, RESULT_TOO_LARGE } from '../../src/tools/mcp/limited-fetch.ts';

const serve = (body: string, type: string) => () =>
  Promise.resolve(new Response(body, { headers: { 'content-type': type } }));

describe('limitedFetch (maxResultBytes over HTTP)', () => {
  it('passes a JSON body under the limit, and fails one over it', async () => {
    const small = await limitedFetch(serve('{"ok":true}', 'application/json'), 100)('http://x/');
    expect(await small.json()).toEqual({ ok: true });
    const big = await limitedFetch(
      serve(JSON.stringify({ text: 'x'.repeat(1000) }), 'application/json'),
      100,
    )('http://x/');
    await expect(big.text()).rejects.toBeInstanceOf(ResultTooLarge);
  });

  it('replaces an SSE event over the limit with an error for its call, and keeps the stream', async () => {
    const events = [
      `event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(500)}"}}\n\n`,
      'event: message\ndata: {"jsonrpc":"2.0","id":2,"result":{}}\n\n',
    ].join('');
    const res = await limitedFetch(serve(events, 'text/event-stream'), 200)('http://x/');
    const lines = (await res.text()).split('\n');
    const data = lines.filter((l) => l.startsWith('data: ')).map((l) => JSON.parse(l.slice(6)));
    expect(data[0]).toMatchObject({
      id: 1,
      error: { code: RESULT_TOO_LARGE, message: expect.stringMatching(/maxResultBytes \(200\)/) },
    });
    expect(data[1]).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(lines.filter((l) => l === '').length).toBeGreaterThanOrEqual(2); // event boundaries kept
  });
});
