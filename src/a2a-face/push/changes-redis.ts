/**
 * Push config index changes across the instances of one Redis (config-index.ts' `IndexChanges`): a message on the
 * channel `<keyPrefix>a2a-push:changed` per change, on connections of its own (a subscriber cannot run commands).
 * Contracts: `live()` is true from the subscription's confirmation until the subscriber reports an error, and again
 * once it is ready and subscribed anew (listeners are told then: changes may have been missed). `publish` rejects
 * while Redis is away (the config's change fails with it). `open` resolves once subscribed, or rejects (the caller
 * logs it; reads then go to the store, as while not live).
 */
import type { Logger } from '../../log/index.ts';
import { closeRedisConnection, createRedisConnection } from '../../redis/index.ts';
import type { IndexChanges } from './config-index.ts';

export function createRedisIndexChanges(options: { url: string; keyPrefix: string; log: Logger }) {
  const client = createRedisConnection(options.url, 'a2a push configs', options.log);
  const subscriber = client.duplicate();
  const channel = `${options.keyPrefix}a2a-push:changed`;
  const listeners: (() => void)[] = [];
  let live = false;
  let opened = false;
  const changed = () => {
    for (const listener of listeners) listener();
  };
  const down = () => {
    live = false;
    changed();
  };
  subscriber.on('error', down);
  subscriber.on('ready', () => {
    if (!opened || live) return;
    // node-redis subscribes again on reconnection; a round trip after it confirms.
    subscriber
      .ping()
      .then(() => ((live = true), changed()))
      .catch(() => undefined);
  });

  const changes: IndexChanges = {
    live: () => live,
    async publish() {
      await client.publish(channel, '1');
    },
    listen: (onChange) => void listeners.push(onChange),
  };
  return {
    changes,
    async open(): Promise<void> {
      await client.connect();
      await subscriber.connect();
      await subscriber.subscribe(channel, changed);
      opened = true;
      live = true;
      changed();
    },
    async close(): Promise<void> {
      opened = false;
      live = false;
      await Promise.all([closeRedisConnection(subscriber), closeRedisConnection(client)]);
    },
  };
}
