/** The scale benchmark's cores: agentd's apart from the load's where the machine has enough (bench/lib/pinning.ts). */
import { describe, expect, it } from 'vitest';
import { onCpus, planPinning } from '../../bench/lib/pinning.ts';

describe('planPinning', () => {
  it('leaves a machine of fewer than 4 cores unpinned', () => {
    expect(planPinning(1)).toBeUndefined();
    expect(planPinning(2)).toBeUndefined();
    expect(planPinning(3)).toBeUndefined();
  });

  it('gives agentd CPUs 0 and 1 and the load every other core', () => {
    expect(planPinning(4)).toEqual({ agentd: '0,1', load: '2,3' });
    expect(planPinning(16)).toEqual({ agentd: '0,1', load: '2-15' });
  });

  it('takes BENCH_SCALE_CPUS as <agentd cores>:<load cores>, on any machine', () => {
    expect(planPinning(2, '0:1')).toEqual({ agentd: '0', load: '1' });
    expect(planPinning(64, '4-5:0-3,6')).toEqual({ agentd: '4-5', load: '0-3,6' });
  });

  it('refuses a BENCH_SCALE_CPUS it cannot read, naming the form', () => {
    for (const bad of ['0-1', '0-1:', ':2', '0-1:2:3', 'a:b', '0-1:2-'])
      expect(() => planPinning(8, bad)).toThrow(/<agentd cores>:<load cores> \(e\.g\. 0-1:2-3\), got/);
  });

  it('runs a command under taskset -c only when it has cores to keep to', () => {
    expect(onCpus(['redis-server', '--port', '1'], undefined)).toEqual(['redis-server', ['--port', '1']]);
    expect(onCpus(['redis-server', '--port', '1'], '2,3')).toEqual([
      'taskset',
      ['-c', '2,3', 'redis-server', '--port', '1'],
    ]);
  });
});
