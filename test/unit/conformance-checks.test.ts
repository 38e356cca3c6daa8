/**
 * The conformance suite's results held check by check (test/support/conformance-checks.ts): a run's checks.json
 * files folded per scenario, and every difference from the pinned table worded as regression, progress or change.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compareChecks, readChecks, tally } from '../support/conformance-checks.ts';

const dir = mkdtempSync(join(tmpdir(), 'agentd-checks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const save = (folder: string, checks: { id: string; status: string }[]) => {
  mkdirSync(join(dir, folder));
  writeFileSync(join(dir, folder, 'checks.json'), JSON.stringify(checks));
};

describe('conformance checks', () => {
  it('are read per scenario, a repeated check id folded to its worst status', () => {
    save('server-tasks-lifecycle-2026-11-28T13-53-55-415Z', [
      { id: 'b', status: 'SUCCESS' },
      { id: 'a', status: 'SUCCESS' },
      { id: 'b', status: 'FAILURE' },
      { id: 'b', status: 'SUCCESS' },
    ]);
    save('server-ping-2026-11-28T13-53-55-363Z', [{ id: 'ping', status: 'SUCCESS' }]);
    const seen = readChecks(dir);
    expect(seen).toEqual({ ping: { ping: 'SUCCESS' }, 'tasks-lifecycle': { a: 'SUCCESS', b: 'FAILURE' } });
    expect(tally(seen, (s) => s.startsWith('tasks-'))).toEqual({ SUCCESS: 1, FAILURE: 1 });
  });

  it('fail on a check that passed and no longer does, and ask for a newly passing one to be pinned', () => {
    const pinned = { s: { kept: 'SUCCESS', lost: 'SUCCESS', fixed: 'FAILURE', warned: 'FAILURE', gone: 'SUCCESS' } };
    const seen = { s: { kept: 'SUCCESS', lost: 'FAILURE', fixed: 'SUCCESS', warned: 'WARNING', fresh: 'SUCCESS' } };
    expect(compareChecks(pinned, seen, 'base.yml')).toEqual([
      'regression: s:lost passed, now FAILURE',
      'progress: s:fixed passes now (was FAILURE): take it off base.yml and pin it (UPDATE_GOLDEN=1)',
      'changed: s:warned was FAILURE, now WARNING (UPDATE_GOLDEN=1 pins it)',
      'regression: s:gone passed, now not run',
      'progress: s:fresh passes now (was not run): take it off base.yml and pin it (UPDATE_GOLDEN=1)',
    ]);
    expect(compareChecks(pinned, pinned, 'base.yml')).toEqual([]);
  });
});
