/** Command-line flags of the simulator process → SimulatorOptions. */
import { parseArgs } from 'node:util';
import type { SimulatorOptions, UsageMode } from './types.ts';

export const USAGE_TEXT = `usage: tsx tools/simulator/main.ts [flags]
  --port N                  TCP port (default 4010; 0 = a free port)
  --host HOST               interface to bind (default 127.0.0.1)
  --ttft-ms MS              delay before the first streamed piece (default 0)
  --tokens-per-sec N        streamed pieces per second (default 0 = as fast as possible)
  --reply-tokens N          default replies are N filler pieces instead of an echo
  --tool-arg-chunk-chars N  characters per streamed tool-argument delta (default 8)
  --usage auto|always|never usage chunk: when the request asks (default), always, never
  --model ID                model id listed by GET /v1/models (repeatable)
  --api-key KEY             require "Authorization: Bearer KEY"
  --record                  keep request bodies in memory (off by default in the CLI)
  --context-window N        answer 400 context_length_exceeded (OpenAI's body) to prompts over N tokens`;

export class CliArgsError extends Error {
  override name = 'CliArgsError';
}

function count(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text === '' || !Number.isFinite(n) || n < 0)
    throw new CliArgsError(`--${flag} must be a non-negative number, got "${text}"`);
  return n;
}

/** Parses argv (without node and script); `help` is true when --help was given. Throws CliArgsError. */
export function parseSimulatorArgs(argv: string[]): { options: SimulatorOptions; help: boolean } {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        'ttft-ms': { type: 'string' },
        'tokens-per-sec': { type: 'string' },
        'reply-tokens': { type: 'string' },
        'tool-arg-chunk-chars': { type: 'string' },
        usage: { type: 'string' },
        model: { type: 'string', multiple: true },
        'api-key': { type: 'string' },
        record: { type: 'boolean' },
        'context-window': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (e) {
    throw new CliArgsError(e instanceof Error ? e.message : String(e));
  }
  const options: SimulatorOptions = { port: count('port', values.port) ?? 4010, record: values.record ?? false };
  const set = <K extends keyof SimulatorOptions>(key: K, value: SimulatorOptions[K] | undefined) => {
    if (value !== undefined) options[key] = value;
  };
  set('host', values.host);
  set('ttftMs', count('ttft-ms', values['ttft-ms']));
  set('tokensPerSec', count('tokens-per-sec', values['tokens-per-sec']));
  set('replyTokens', count('reply-tokens', values['reply-tokens']));
  set('toolArgChunkChars', count('tool-arg-chunk-chars', values['tool-arg-chunk-chars']));
  set('models', values.model);
  set('apiKey', values['api-key']);
  set('contextWindow', count('context-window', values['context-window']));
  if (values.usage !== undefined) {
    if (!['auto', 'always', 'never'].includes(values.usage))
      throw new CliArgsError(`--usage must be auto, always or never`);
    options.usage = values.usage as UsageMode;
  }
  return { options, help: values.help ?? false };
}
