/** The chaos run's command line (tools/chaos/args.ts): what CI passes, and refusals of what it does not know. */
import { describe, expect, it } from 'vitest';
import { parseChaosArgs } from '../../tools/chaos/args.ts';

describe('chaos run arguments', () => {
  it("takes CI's seeded run with the WebSocket kinds it tolerates", () => {
    const args = parseChaosArgs(['--seconds', '75', '--seed', '71', '--tolerate', 'wsDuplicate,wsMissed']);
    expect(args).toMatchObject({
      seconds: 75,
      seed: 71,
      seedGiven: true,
      instances: 3,
      tolerate: ['wsDuplicate', 'wsMissed'],
    });
  });

  it('tolerates nothing by default, and refuses a kind the checker does not count', () => {
    expect(parseChaosArgs([]).tolerate).toEqual([]);
    expect(() => parseChaosArgs(['--tolerate', 'wsDuplicate,lostFrames'])).toThrow(
      '"lostFrames" is not a violation kind',
    );
  });
});
