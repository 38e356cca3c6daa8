/**
 * What a failed connection attempt tells about the era of a tool server (src/tools/mcp/eras.ts): the next
 * attempt is decided from codes and structured fields only, never from an error's text.
 */
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError, UnauthorizedError } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import {
  initializeWitness,
  negotiationMode,
  nextAttempt,
  refusedAsModern,
  type Attempt,
  type FailedAttempt,
} from '../../src/tools/mcp/eras.ts';

const PIN = { pin: '2026-07-28' } as const;
const http400 = (body: unknown) =>
  new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'Error POSTing to endpoint', {
    status: 400,
    statusText: 'Bad Request',
    text: JSON.stringify(body),
  });
const rpcBody = (code: number) => ({ jsonrpc: '2.0', id: 0, error: { code, message: 'whatever the server says' } });
const failed = (attempt: Attempt, error: unknown, extra: Partial<FailedAttempt> = {}): FailedAttempt => ({
  setting: 'auto',
  attempt,
  error,
  answeredModern: false,
  childGone: false,
  aborted: false,
  type: 'http',
  ...extra,
});
const auto: Attempt = { mode: 'auto', transport: 'main' };
const legacy: Attempt = { mode: 'legacy', transport: 'main' };

describe('protocolVersion settings', () => {
  it('maps auto, 2025-11-25 and 2026-07-28 to the SDK negotiation modes (auto by default)', () => {
    expect(negotiationMode(undefined)).toBe('auto');
    expect(negotiationMode('auto')).toBe('auto');
    expect(negotiationMode('2025-11-25')).toBe('legacy');
    expect(negotiationMode('2026-07-28')).toEqual(PIN);
  });
});

describe('a refused 2025-era initialize', () => {
  it.each([-32022, -32020, -32601])(
    '%i, as a JSON-RPC error or the body of an HTTP 400, is a 2026-07-28-only server',
    (code) => {
      expect(refusedAsModern(new ProtocolError(code, 'x'), false)).toBe(true);
      expect(refusedAsModern(http400(rpcBody(code)), false)).toBe(true);
    },
  );

  it('an answer naming protocolVersion 2026-07-28 is one too (seen on the wire: the SDK refuses it without a code)', () => {
    const witness = initializeWitness();
    witness.onmessage({
      jsonrpc: '2.0',
      id: 0,
      result: { protocolVersion: '2025-11-25', capabilities: {}, serverInfo: { name: 's', version: '1' } },
    });
    expect(witness.answeredModern()).toBe(false);
    witness.onmessage({
      jsonrpc: '2.0',
      id: 0,
      result: { protocolVersion: '2026-07-28', capabilities: {}, serverInfo: { name: 's', version: '1' } },
    });
    expect(witness.answeredModern()).toBe(true);
    expect(refusedAsModern(new Error('anything'), true)).toBe(true);
  });

  it('is not read from text: other codes, other statuses, and messages that merely mention a version are not', () => {
    expect(refusedAsModern(new ProtocolError(-32602, 'Unsupported protocol version -32022'), false)).toBe(false);
    expect(refusedAsModern(new Error('MCP error -32022: Unsupported protocol version'), false)).toBe(false);
    expect(refusedAsModern(http400({ note: 'unsupported protocol version -32022' }), false)).toBe(false);
    expect(
      refusedAsModern(
        new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'x', {
          status: 500,
          text: JSON.stringify(rpcBody(-32022)),
        }),
        false,
      ),
    ).toBe(false);
  });
});

describe('the next attempt', () => {
  it('auto: a refusal of the fallback initialize leads to 2026-07-28, a failed probe or a child gone to the 2025 era', () => {
    expect(nextAttempt(failed(auto, new ProtocolError(-32601, 'x')), [auto])).toEqual({ mode: PIN, transport: 'main' });
    expect(nextAttempt(failed(auto, new SdkError(SdkErrorCode.EraNegotiationFailed, 'x')), [auto])).toEqual(legacy);
    expect(nextAttempt(failed(auto, new Error('exited'), { childGone: true, type: 'stdio' }), [auto])).toEqual(legacy);
    expect(nextAttempt(failed(legacy, http400(rpcBody(-32022))), [auto, legacy])).toEqual({
      mode: PIN,
      transport: 'main',
    });
  });

  it('a setting of one era stays in it: 2025-11-25 falls back to SSE only, 2026-07-28 to nothing', () => {
    const notFound = new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, 'x', {
      status: 405,
      text: 'Method Not Allowed',
    });
    expect(nextAttempt(failed(legacy, notFound), [legacy])).toEqual({ mode: 'legacy', transport: 'sse' });
    expect(nextAttempt(failed(legacy, http400(rpcBody(-32022)), { setting: '2025-11-25' }), [legacy])).toBeUndefined();
    expect(nextAttempt(failed(legacy, notFound, { setting: '2025-11-25' }), [legacy])).toEqual({
      mode: 'legacy',
      transport: 'sse',
    });
    const pinned: Attempt = { mode: PIN, transport: 'main' };
    const setting = '2026-07-28';
    expect(
      nextAttempt(failed(pinned, new SdkError(SdkErrorCode.EraNegotiationFailed, 'x'), { setting }), [pinned]),
    ).toBeUndefined();
    expect(nextAttempt(failed(pinned, notFound, { setting }), [pinned])).toBeUndefined();
  });

  it('never after a timeout, a sign-in wall, an abandoned attempt, or what was tried already', () => {
    expect(nextAttempt(failed(auto, new SdkError(SdkErrorCode.RequestTimeout, 'x')), [auto])).toBeUndefined();
    expect(nextAttempt(failed(auto, new UnauthorizedError()), [auto])).toBeUndefined();
    expect(
      nextAttempt(failed(auto, new SdkHttpError(SdkErrorCode.ClientHttpForbidden, 'x', { status: 403 })), [auto]),
    ).toBeUndefined();
    expect(nextAttempt(failed(auto, new ProtocolError(-32601, 'x'), { aborted: true }), [auto])).toBeUndefined();
    expect(
      nextAttempt(failed(legacy, new ProtocolError(-32601, 'x')), [auto, { mode: PIN, transport: 'main' }, legacy]),
    ).toBeUndefined();
  });
});
