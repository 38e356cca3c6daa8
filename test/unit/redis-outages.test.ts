/**
 * `watchOutages`: one `lost` per outage, and `back` only once Redis answers reads — a Redis restarting accepts
 * connections while it loads its dataset and refuses every command with LOADING meanwhile (the chaos run found turns
 * whose ends, written at such a `back`, were refused and never tried again).
 */
import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { watchReconnects } from '../../src/cluster/reconnects.ts';
import { watchOutages, type RedisConnection } from '../../src/redis/index.ts';
import { PATIENT } from '../support/wait.ts';

/** A connection as watchOutages sees it: its events, its readiness, and reads that fail while `loading`. */
function connection() {
  const events = new EventEmitter();
  const state = { isReady: true, loading: false, reads: 0 };
  const client = {
    on: (name: string, fn: (...args: unknown[]) => void) => (events.on(name, fn), client),
    off: (name: string, fn: (...args: unknown[]) => void) => (events.off(name, fn), client),
    exists: () => {
      state.reads++;
      return state.loading
        ? Promise.reject(new Error('LOADING Redis is loading the dataset in memory'))
        : Promise.resolve(0);
    },
    get isReady() {
      return state.isReady;
    },
  };
  return { client: client as unknown as Parameters<typeof watchOutages>[0], events, state };
}

describe('watchOutages', () => {
  it('given an outage, when the connection is ready while Redis still loads, then back waits until reads succeed', async () => {
    const { client, events, state } = connection();
    const heard: string[] = [];
    watchOutages(client, { lost: (e) => heard.push(`lost ${e.message}`), back: () => heard.push('back') });
    events.emit('error', new Error('ECONNREFUSED'));
    events.emit('error', new Error('ECONNREFUSED'));
    state.loading = true;
    events.emit('ready');
    await expect.poll(() => state.reads, PATIENT).toBeGreaterThan(1); // asked again while it loads
    expect(heard).toEqual(['lost ECONNREFUSED']);
    state.loading = false;
    await expect.poll(() => heard, PATIENT).toEqual(['lost ECONNREFUSED', 'back']);
  });

  it('given an outage, when the connection is ready again, then ready is told at once and a lease quiet starts then, before back', () => {
    const { client, events, state } = connection();
    state.loading = true; // back cannot come yet
    const heard: string[] = [];
    watchOutages(client, {
      lost: () => heard.push('lost'),
      back: () => heard.push('back'),
      ready: () => heard.push('ready'),
    });
    let now = 1_000;
    const reconnects = watchReconnects(client as RedisConnection, 2_000, { now: () => now });
    events.emit('error', new Error('down'));
    expect(reconnects.quietUntil()).toBe(0);
    now = 5_000;
    events.emit('ready'); // a claim sent from here on may be answered before Redis said it loaded
    expect(heard).toEqual(['lost', 'ready']);
    expect(reconnects.quietUntil()).toBe(7_000);
  });

  it('given a connection ready with no outage before, then nothing is told', async () => {
    const { client, events, state } = connection();
    const heard: string[] = [];
    watchOutages(client, { lost: () => heard.push('lost'), back: () => heard.push('back') });
    events.emit('ready');
    await Promise.resolve();
    expect(heard).toEqual([]);
    expect(state.reads).toBe(0);
  });

  it('given the connection lost again while Redis loads, then back waits for the next ready', async () => {
    const { client, events, state } = connection();
    const heard: string[] = [];
    watchOutages(client, { lost: () => heard.push('lost'), back: () => heard.push('back') });
    events.emit('error', new Error('down'));
    state.loading = true;
    events.emit('ready');
    await expect.poll(() => state.reads, PATIENT).toBeGreaterThan(0);
    state.isReady = false;
    events.emit('error', new Error('down again'));
    state.loading = false;
    state.isReady = true;
    events.emit('ready');
    await expect.poll(() => heard, PATIENT).toEqual(['lost', 'back']);
  });
});
