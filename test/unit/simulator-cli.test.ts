import { describe, expect, it } from 'vitest';
import { CliArgsError, parseSimulatorArgs } from '../../tools/simulator/cli-args.ts';

describe('simulator command line', () => {
  it('maps flags to options, with CLI defaults', () => {
    expect(parseSimulatorArgs([])).toEqual({ options: { port: 4010, record: false }, help: false });
    expect(
      parseSimulatorArgs([
        '--port',
        '0',
        '--ttft-ms',
        '20',
        '--tokens-per-sec',
        '50',
        '--reply-tokens',
        '100',
        '--usage',
        'always',
        '--model',
        'a',
        '--model',
        'b',
        '--record',
      ]),
    ).toEqual({
      options: {
        port: 0,
        ttftMs: 20,
        tokensPerSec: 50,
        replyTokens: 100,
        usage: 'always',
        models: ['a', 'b'],
        record: true,
      },
      help: false,
    });
  });

  it('rejects bad values and unknown flags', () => {
    expect(() => parseSimulatorArgs(['--port', 'x'])).toThrow(CliArgsError);
    expect(() => parseSimulatorArgs(['--usage', 'sometimes'])).toThrow(/--usage/);
    expect(() => parseSimulatorArgs(['--nope'])).toThrow(CliArgsError);
  });
});
