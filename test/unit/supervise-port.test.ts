/** `--workers` with port 0: which port the workers after the first ask for, by the first one's engine. */
import { describe, expect, it } from 'vitest';
import { portForOthers } from '../../src/cli/supervise.ts';

describe('the port the later workers ask for', () => {
  it('is the first worker’s port on uWebSockets.js, where each worker binds it itself', () => {
    expect(portForOthers(0, { type: 'ready', port: 41234, engine: 'uws' })).toBe(41234);
  });

  it('stays 0 on node:http, where node:cluster gives every worker the first one’s handle', () => {
    expect(portForOthers(0, { type: 'ready', port: 41234, engine: 'node' })).toBe(0);
  });

  it('is the requested port whenever one was given', () => {
    expect(portForOthers(8080, { type: 'ready', port: 8080, engine: 'uws' })).toBe(8080);
    expect(portForOthers(8080, { type: 'ready', port: 8080, engine: 'node' })).toBe(8080);
  });
});
