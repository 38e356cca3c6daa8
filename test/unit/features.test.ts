/**
 * createApp's features (src/app/features.ts): built once each, after the features they need, which they are handed
 * by name; their mounts in the order listed; a need not listed, a name listed twice, a circle: an error naming them.
 */
import { describe, expect, it } from 'vitest';
import { buildFeatures, buildOrder } from '../../src/app/features.ts';
import type { Feature } from '../../src/http/feature-mount.ts';

const named = (name: string, needs: string[] = []) => ({ name, needs });
const names = (features: { name: string }[]) => features.map((f) => f.name);

describe('the order features are built in', () => {
  it('is the listed order when no feature needs another', () => {
    expect(names(buildOrder([named('a'), named('b'), named('c')]))).toEqual(['a', 'b', 'c']);
  });

  it('puts each feature after the features it needs, the others staying in their listed order', () => {
    const order = names(buildOrder([named('push', ['hooks']), named('a'), named('hooks', ['store']), named('store')]));
    expect(order).toEqual(['store', 'hooks', 'push', 'a']);
  });

  it('refuses a need that is not listed, naming the feature and the need', () => {
    expect(() => buildOrder([named('push', ['hooks'])])).toThrow('feature "push" needs "hooks", which is not listed');
  });

  it('refuses needs that go round in a circle, naming it', () => {
    const circle = [named('a', ['b']), named('b', ['c']), named('c', ['a'])];
    expect(() => buildOrder(circle)).toThrow('features need each other in a circle: a → b → c → a');
    expect(() => buildOrder([named('self', ['self'])])).toThrow('a circle: self → self');
  });

  it('refuses a name listed twice', () => {
    expect(() => buildOrder([named('a'), named('a')])).toThrow('feature "a" is listed twice');
  });
});

describe('building the features', () => {
  const built: string[] = [];
  const hooks: Feature<'hooks', { prefix: string }, { send: (s: string) => string }> = {
    name: 'hooks',
    build: ({ prefix }) => {
      built.push('hooks');
      return { mount: { name: 'hooks' }, port: { send: (s) => `${prefix}${s}` } };
    },
  };
  const push: Feature<'push', { suffix: string }, string, { hooks: { send: (s: string) => string } }> = {
    name: 'push',
    needs: ['hooks'],
    build: ({ suffix }, needed) => {
      built.push('push');
      return { mount: { name: 'push' }, port: needed.hooks.send(suffix) };
    },
  };
  const quiet: Feature<'quiet', object> = { name: 'quiet', build: () => (built.push('quiet'), {}) };

  it('builds each once, hands it what it needs by name, and gives back the mounts in the listed order', () => {
    const { mounts, ports } = buildFeatures([push, quiet, hooks] as const, { prefix: '<', suffix: '>' });
    expect(built).toEqual(['hooks', 'push', 'quiet']);
    expect(mounts.map((m) => m.name)).toEqual(['push', 'hooks']); // `quiet` mounts nothing
    expect(ports).toEqual({ push: '<>', quiet: undefined, hooks: { send: expect.any(Function) } });
  });
});
