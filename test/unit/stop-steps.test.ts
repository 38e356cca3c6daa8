import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { stopInOrder } from '../../src/app/stop-steps.ts';

/** A logger whose records land in `records`. */
function recordingLog() {
  const records: { level: number; msg: string; step?: string; ms?: number }[] = [];
  const log = pino({ level: 'info' }, { write: (line: string) => records.push(JSON.parse(line)) });
  return { log, records };
}

describe('stopping in named steps', () => {
  it('runs the steps in order, each after the last one ended', async () => {
    const { log, records } = recordingLog();
    const ran: string[] = [];
    await stopInOrder(
      [
        ['first', async () => void (await Promise.resolve(), ran.push('first'))],
        ['second', () => void ran.push('second')],
      ],
      log,
    );
    expect(ran).toEqual(['first', 'second']);
    expect(records).toEqual([]); // quick steps say nothing
  });

  it('names a step that is slow in a warning while it runs, and again when it ends', async () => {
    const { log, records } = recordingLog();
    const warned = () => records.some((r) => r.step === 'the tool servers');
    // The step ends only once its warning was written: it cannot pass without one.
    const untilWarned = () =>
      new Promise<void>((resolve) => {
        const poll = setInterval(() => warned() && (clearInterval(poll), resolve()), 1);
      });
    await stopInOrder([['the tool servers', untilWarned]], log, 5);
    expect(records.map((r) => [r.level, r.msg])).toEqual([
      [40, 'stopping: still waiting for the tool servers'],
      [40, 'stopping: the tool servers done'],
    ]);
    expect(records[1]!.ms).toBeGreaterThanOrEqual(5);
  });

  it('ends with the failure of a step, and runs none after it', async () => {
    const { log } = recordingLog();
    let after = false;
    const failing = stopInOrder(
      [
        [
          'the store',
          () => {
            throw new Error('disk gone');
          },
        ],
        ['observability', () => void (after = true)],
      ],
      log,
    );
    await expect(failing).rejects.toThrow('disk gone');
    expect(after).toBe(false);
  });
});
