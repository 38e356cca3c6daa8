/** The AG-UI example launcher's ports (tools/ag-ui-example/args.ts): a flag, else its variable, else a free port (0). */
import { describe, expect, it } from 'vitest';
import { LauncherArgsError, parseLauncherArgs } from '../../tools/ag-ui-example/args.ts';

describe('the AG-UI example launcher’s ports', () => {
  it('are free ports (0) when neither a flag nor a variable gives one', () => {
    expect(parseLauncherArgs([], {})).toEqual({ ports: { page: 0, agentd: 0, simulator: 0 }, help: false });
  });

  it('come from PAGE_PORT, AGENTD_PORT and SIMULATOR_PORT, and a flag wins over its variable', () => {
    const env = { PAGE_PORT: '5173', AGENTD_PORT: '3001', SIMULATOR_PORT: '4010' };
    expect(parseLauncherArgs([], env).ports).toEqual({ page: 5173, agentd: 3001, simulator: 4010 });
    expect(parseLauncherArgs(['--agentd-port', '3100', '--page-port=0'], env).ports).toEqual({
      page: 0,
      agentd: 3100,
      simulator: 4010,
    });
  });

  it('refuse what is not a port, naming where it came from, and unknown flags', () => {
    expect(() => parseLauncherArgs(['--page-port', '80a'], {})).toThrow(/--page-port must be a port.*"80a"/);
    expect(() => parseLauncherArgs([], { AGENTD_PORT: '70000' })).toThrow(/AGENTD_PORT must be a port.*"70000"/);
    expect(() => parseLauncherArgs(['--port', '1'], {})).toThrow(LauncherArgsError);
  });

  it('answer --help', () => {
    expect(parseLauncherArgs(['-h'], {}).help).toBe(true);
  });
});
