import { describe, expect, it } from 'vitest';
import { AppError, toJsonRpc, toRestReply, toWsFrame } from '../../src/errors/index.ts';
import { createAdmission, MethodNotAllowed, type AdmissionDeps, type RequestFacts } from '../../src/http/admission.ts';
import { createPrincipals } from '../../src/auth/index.ts';
import { tooLarge, type BodyResult } from '../../src/http/body.ts';
import { createCors } from '../../src/http/cors.ts';
import type { LimitState, WindowLimiter } from '../../src/http/limits.ts';
import { relayResponse, streamReply, type RelayTarget } from '../../src/http/relay.ts';

describe('error encoders', () => {
  const NOW = Date.UTC(2030, 0, 2, 3, 4, 5, 678);
  const err = new AppError('RATE_LIMIT_EXCEEDED', 'slow down', { limit: 5, remaining: 0, resetTime: 99 });

  it('encode one error three ways from the table', () => {
    expect(toRestReply(err, NOW)).toEqual({
      status: 429,
      body: {
        success: false,
        error: {
          code: 'RATE_LIMIT_EXCEEDED',
          message: 'slow down',
          details: { limit: 5, remaining: 0, resetTime: 99 },
        },
        timestamp: '2030-01-02T03:04:05.678Z',
      },
    });
    expect(toWsFrame(err, 's1')).toEqual({
      event: 'error',
      data: {
        code: 'RATE_LIMIT_EXCEEDED',
        message: 'slow down',
        details: { limit: 5, remaining: 0, resetTime: 99 },
        sessionId: 's1',
      },
    });
    expect(toWsFrame(err).data).not.toHaveProperty('sessionId');
    expect(toJsonRpc(err)).toEqual({
      status: 429,
      body: {
        jsonrpc: '2.0',
        error: {
          code: -32000,
          message: 'slow down',
          data: { code: 'RATE_LIMIT_EXCEEDED', limit: 5, remaining: 0, resetTime: 99 },
        },
        id: null,
      },
    });
  });

  it('hide anything that is not an AppError behind INTERNAL_ERROR, and send WS-only codes over HTTP as 400', () => {
    expect(toRestReply(new Error('secret internals'), NOW).body.error).toEqual({
      code: 'INTERNAL_ERROR',
      message: 'Unexpected error',
      details: {},
    });
    expect(toJsonRpc(new Error('secret internals'))).toMatchObject({
      status: 500,
      body: { error: { code: -32603, message: 'Unexpected error' } },
    });
    expect(toRestReply(new AppError('INVALID_MESSAGE_TYPE', 'x'), NOW).status).toBe(400);
  });
});

/** A limiter whose verdict the test sets; it counts its calls. */
function fakeLimiter(allowed: boolean) {
  const state: LimitState = { limit: 5, remaining: allowed ? 4 : 0, resetTime: 1_000_060, allowed, windowSec: 60 };
  const limiter: WindowLimiter & { calls: number } = {
    calls: 0,
    consume() {
      limiter.calls++;
      return Promise.resolve(state);
    },
    peek: () => Promise.resolve(state),
    forget: () => Promise.resolve(),
  };
  return limiter;
}

describe('admission chain', () => {
  const setup = (opts: { allowed?: boolean; closing?: boolean } = {}) => {
    const limiter = fakeLimiter(opts.allowed ?? true);
    const deps: AdmissionDeps = {
      limiter,
      cors: createCors({ origins: ['https://ok.example'], methods: ['GET'], headers: ['Authorization'], maxAge: 60 }),
      auth: createPrincipals({ apiKey: 'the-right-key-0123456789' }),
      clock: { now: () => 1_000_000_000 },
      isHostAllowed: (host) => host !== 'evil.example',
      isClosing: () => opts.closing ?? false,
    };
    return { admission: createAdmission(deps), limiter };
  };
  const good: RequestFacts = { host: 'localhost', origin: '', ip: '1.2.3.4', credential: 'the-right-key-0123456789' };
  const route = () => 'matched';
  const codeOf = (v: { outcome: string; error?: AppError }) => (v.outcome === 'refused' ? v.error?.code : v.outcome);
  const never = () => new Promise<BodyResult>(() => undefined);

  it('refuses in the fixed order host → origin → closing → limit → auth → route → body', async () => {
    const { admission } = setup({ allowed: false, closing: true });
    const bad = { ...good, host: 'evil.example', origin: 'https://evil.example', credential: 'wrong' };
    const failing = () => {
      throw new AppError('INVALID_REQUEST', 'no route');
    };
    expect(codeOf(await admission.admit(bad, { route: failing, body: never }))).toBe('FORBIDDEN');
    expect(await admission.admit(bad, { route })).toMatchObject({
      outcome: 'refused',
      error: { code: 'FORBIDDEN', details: { host: 'evil.example' } },
    });
    expect(await admission.admit({ ...bad, host: 'localhost' }, { route })).toMatchObject({
      error: { code: 'FORBIDDEN', details: { origin: 'https://evil.example' } },
    });
    expect(codeOf(await admission.admit({ ...bad, host: 'localhost', origin: '' }, { route }))).toBe(
      'SERVICE_UNAVAILABLE',
    );
    expect(codeOf(await setup({ allowed: false }).admission.admit({ ...good, credential: 'wrong' }, { route }))).toBe(
      'RATE_LIMIT_EXCEEDED',
    );
    expect(codeOf(await setup().admission.admit({ ...good, credential: 'wrong' }, { route: failing }))).toBe(
      'UNAUTHORIZED',
    );
    // The route refuses before the body is awaited (a body that never ends does not hold the answer).
    expect(codeOf(await setup().admission.admit(good, { route: failing, body: never }))).toBe('INVALID_REQUEST');
    expect(
      await setup().admission.admit(good, { route, body: () => Promise.resolve({ ok: false, error: tooLarge(10) }) }),
    ).toMatchObject({
      outcome: 'refused',
      error: { code: 'INVALID_REQUEST', details: { limit: 10, reason: 'body_too_large' } },
    });
  });

  it('takes one point per request, refusals included, and reports it on every verdict', async () => {
    const { admission, limiter } = setup();
    const verdicts = await Promise.all([
      admission.admit({ ...good, host: 'evil.example' }, { route }),
      admission.admit({ ...good, origin: 'https://ok.example', preflight: true }, { route }),
      admission.admit({ ...good, credential: undefined }, { route }),
      admission.admit(good, { route, body: () => Promise.resolve({ ok: true, raw: Buffer.from('{}') }) }),
    ]);
    expect(limiter.calls).toBe(4);
    for (const v of verdicts)
      expect(v.headers).toMatchObject({
        'X-RateLimit-Limit': '5',
        'X-RateLimit-Remaining': '4',
        'X-RateLimit-Reset': '1000060',
      });
    expect(verdicts[1]).toMatchObject({
      outcome: 'preflight',
      headers: { 'Access-Control-Allow-Origin': 'https://ok.example', 'Access-Control-Max-Age': '60' },
    });
    expect(verdicts[3]).toMatchObject({ outcome: 'admitted', route: 'matched', body: Buffer.from('{}') });
  });

  it('adds Retry-After from the injected clock on a 429, and 405 with Allow for MethodNotAllowed', async () => {
    const limited = await setup({ allowed: false }).admission.admit(good, { route });
    expect(limited).toMatchObject({
      outcome: 'refused',
      headers: { 'Retry-After': '60' },
      error: {
        message:
          'Rate limit exceeded: at most 5 requests from this address per 60 s window (raise it with server.limits.rest.points)',
        details: { limit: 5, remaining: 0, resetTime: 1_000_060 },
      },
    });
    const wrongMethod = await setup().admission.admit(good, {
      route: () => {
        throw new MethodNotAllowed('GET', '/mcp', 'POST');
      },
    });
    expect(wrongMethod).toMatchObject({
      outcome: 'refused',
      status: 405,
      headers: { Allow: 'POST' },
      error: { code: 'INVALID_REQUEST' },
    });
  });
});

describe('admission of a probe', () => {
  const setup = (allowed: boolean) => {
    const limiter = fakeLimiter(allowed);
    const admission = createAdmission({
      limiter,
      cors: createCors({ origins: [], methods: ['GET'], headers: ['Authorization'], maxAge: 60 }),
      auth: createPrincipals({ apiKey: 'the-right-key-0123456789' }),
      clock: { now: () => 1_000_000_000 },
      isHostAllowed: () => true,
      isClosing: () => false,
    });
    return { admission, limiter };
  };
  const probe: RequestFacts = {
    host: 'localhost',
    origin: '',
    ip: '127.0.0.1',
    credential: 'the-right-key-0123456789',
    probe: true,
  };
  const route = () => 'health';

  it('admits a probe past the limit, taking no point, with the window in its headers', async () => {
    const { admission, limiter } = setup(false);
    expect(await admission.admit(probe, { route })).toMatchObject({
      outcome: 'admitted',
      headers: { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Limit': '5' },
    });
    expect(limiter.calls).toBe(0);
  });

  it('counts a refused probe: a wrong key is 401 within the limit and 429 past it', async () => {
    const within = setup(true);
    expect(await within.admission.admit({ ...probe, credential: 'wrong' }, { route })).toMatchObject({
      outcome: 'refused',
      error: { code: 'UNAUTHORIZED' },
    });
    expect(within.limiter.calls).toBe(1);
    const past = setup(false);
    expect(await past.admission.admit({ ...probe, credential: 'wrong' }, { route })).toMatchObject({
      outcome: 'refused',
      error: { code: 'RATE_LIMIT_EXCEEDED' },
      headers: { 'Retry-After': '60' },
    });
  });
});

/** A response the relay writes to: it records what it is given; `full` makes every write report the peer behind. */
function fakeResponse(full: () => boolean) {
  const written: string[] = [];
  const calls: string[] = [];
  let ended = false;
  let drain: (() => void) | undefined;
  let drainAsked!: () => void;
  let asked = new Promise<void>((r) => (drainAsked = r));
  const res: RelayTarget = {
    get ended() {
      return ended;
    },
    send: (status) => void calls.push(`send ${status}`),
    head: (status, headers) =>
      void calls.push(`head ${status}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)),
    write: (chunk) => (written.push(Buffer.from(chunk).toString()), !full()),
    drained: () =>
      new Promise<void>((resolve) => {
        drain = resolve;
        drainAsked();
      }),
    end: () => {
      calls.push('end');
      ended = true;
    },
  };
  return {
    res,
    written,
    calls,
    isEnded: () => ended,
    /** Resolves once the relay waits for the peer to drain. */
    waitsForDrain: () => asked,
    drain: () => {
      asked = new Promise<void>((r) => (drainAsked = r));
      drain?.();
    },
    /** The client goes away. */
    leave: () => {
      ended = true;
      drain?.();
    },
  };
}

describe('SSE relay', () => {
  it('reads no further chunk while the peer is behind, and resumes once it drained', async () => {
    let full = true;
    const fake = fakeResponse(() => full);
    const pieces = ['data: one\n\n', 'data: two\n\n', 'data: three\n\n'];
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          const next = pieces[pulled++];
          if (next === undefined) controller.close();
          else controller.enqueue(new TextEncoder().encode(next));
        },
      },
      { highWaterMark: 0 },
    );
    const response = new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
    const relayed = relayResponse(fake.res, response, { 'X-RateLimit-Limit': '5' });

    await fake.waitsForDrain(); // the relay waits for the socket to drain
    expect(fake.written).toEqual(['data: one\n\n']);
    expect(fake.isEnded()).toBe(false);
    full = false;
    fake.drain();
    await relayed;
    expect(fake.written).toEqual(pieces);
    expect(fake.isEnded()).toBe(true);
  });

  it('streamReply takes no further piece of a lazy body while the peer is behind, and stops taking when the client goes away', async () => {
    const fake = fakeResponse(() => true); // every write fills the buffer
    let pulled = 0;
    let left = false;
    function* pieces() {
      try {
        for (;;) yield `line ${++pulled}\n`;
      } finally {
        left = true;
      }
    }
    const streamed = streamReply(fake.res, 200, { 'Content-Type': 'application/x-ndjson' }, pieces());
    await fake.waitsForDrain();
    expect([fake.written, pulled]).toEqual([['line 1\n'], 1]);
    fake.drain();
    await fake.waitsForDrain();
    expect([fake.written, pulled]).toEqual([['line 1\n', 'line 2\n'], 2]);
    fake.leave();
    await streamed;
    expect([pulled, left, fake.calls.includes('end')]).toEqual([2, true, false]);
  });

  it('streamReply ends the response when its source fails after the head, and rethrows the failure', async () => {
    const fake = fakeResponse(() => false);
    function* failing() {
      yield 'data: one\n\n';
      throw new Error('the turn could not be read');
    }
    await expect(streamReply(fake.res, 200, {}, failing())).rejects.toThrow('the turn could not be read');
    expect([fake.written, fake.calls]).toEqual([['data: one\n\n'], ['head 200', 'end']]);
  });

  it('streamReply answers a body with no piece with an empty, ended response', async () => {
    const fake = fakeResponse(() => false);
    await streamReply(fake.res, 200, { 'X-RateLimit-Limit': '5' }, []);
    expect(fake.calls).toEqual(['head 200', 'X-RateLimit-Limit: 5', 'end']);
    expect(fake.isEnded()).toBe(true);
  });
});
