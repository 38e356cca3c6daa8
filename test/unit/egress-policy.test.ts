/** The egress policy (src/egress/policy.ts): `egress:` first, its older names under `server.mcp` next, then defaults. */
import { describe, expect, it } from 'vitest';
import { agentConfigSchema } from '../../src/config/schema.ts';
import { egressPolicyOf } from '../../src/egress/policy.ts';

const parse = (doc: Record<string, unknown>) => agentConfigSchema.safeParse({ llm: { model: 'm' }, ...doc });

describe('egress policy', () => {
  it('allows private networks and any host by default', () => {
    expect(egressPolicyOf(parse({}).data!)).toEqual({ allowPrivateNetworks: true });
  });

  it('reads egress, else the server.mcp keys it was named by before', () => {
    const egress = parse({ egress: { allowPrivateNetworks: false, allowedHosts: ['.example.com'] } }).data!;
    expect(egressPolicyOf(egress)).toEqual({ allowPrivateNetworks: false, allowedHosts: ['.example.com'] });
    const older = parse({
      server: { mcp: { allowPrivateNetworks: false, allowedHosts: ['hooks.example.com'] } },
    }).data!;
    expect(egressPolicyOf(older)).toEqual({ allowPrivateNetworks: false, allowedHosts: ['hooks.example.com'] });
  });

  it('refuses one key set under both names', () => {
    const both = parse({ egress: { allowPrivateNetworks: false }, server: { mcp: { allowPrivateNetworks: true } } });
    expect(both.success).toBe(false);
    expect(both.error?.issues[0]).toMatchObject({
      path: ['egress'],
      message: expect.stringMatching(/keep egress only/),
    });
  });
});
