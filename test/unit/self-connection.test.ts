/** Telling agentd's own /mcp from any other server by the service id it declares (src/tools/mcp/self-connection.ts). */
import { describe, expect, it } from 'vitest';
import { SELF_CAPABILITY, selfCapability } from '../../src/conversation/hops.ts';
import { isSelf } from '../../src/tools/mcp/self-connection.ts';

describe('self-connection', () => {
  it('is the server that declares our own service id, and no other', () => {
    const ours = { tools: {}, experimental: selfCapability('id-1') };
    expect(ours.experimental).toEqual({ [SELF_CAPABILITY]: { id: 'id-1' } });
    expect(isSelf(ours, 'id-1')).toBe(true);
    expect(isSelf(ours, 'id-2')).toBe(false); // another agentd
    expect(isSelf(ours, undefined)).toBe(false);
    for (const other of [
      undefined,
      {},
      { tools: {} },
      { experimental: {} },
      { experimental: { [SELF_CAPABILITY]: 'id-1' } },
      { experimental: { [SELF_CAPABILITY]: { id: 1 } } },
      { experimental: { other: { id: 'id-1' } } },
    ]) {
      expect(isSelf(other as never, 'id-1'), JSON.stringify(other)).toBe(false);
    }
  });
});
