/**
 * The agent file every instance of a chaos run shares: the simulator (through the slow-model switch) as its model,
 * the run's redis-server with a short lease (`leaseMs`), turns resumed after their owner stopped, limits high enough
 * that the load never meets them, the marker tool server (mark-server.ts, run through tsx) and a tool policy that
 * asks for approval of `mark_ask`. JSON is YAML.
 */
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

export const LEASE_MS = 1500;
/** How long an approval waits for the bot before it is denied by timeout. */
export const APPROVAL_TIMEOUT_MS = 30_000;

export interface AgentFileOptions {
  modelUrl: string;
  redisUrl: string;
  keyPrefix: string;
  markerFile: string;
  stampFile: string;
  /** `storage.replicas` (0: none waited for). */
  replicas?: number;
}

/** How long a write waits for its replica in a run with `--replicas`. */
export const REPLICA_TIMEOUT_MS = 1000;

const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
const markServer = new URL('./mark-server.ts', import.meta.url).pathname;
const many = 1_000_000;

export function agentFile(o: AgentFileOptions): object {
  return {
    version: '1.0.0',
    name: 'chaos',
    systemPrompt: 'You are the chaos run agent.',
    llm: {
      provider: 'openai-compatible',
      baseURL: o.modelUrl,
      model: 'sim-model',
      apiKey: 'chaos',
      timeoutMs: 60_000,
      idleTimeoutMs: 30_000,
    },
    storage: {
      type: 'redis',
      url: o.redisUrl,
      keyPrefix: o.keyPrefix,
      leaseMs: LEASE_MS,
      ...(o.replicas ? { replicas: o.replicas, replicaTimeoutMs: REPLICA_TIMEOUT_MS } : {}),
    },
    server: {
      resumeTurns: true,
      requestTimeoutMs: 60_000,
      limits: {
        rest: { points: many },
        ws: { points: many },
        wsPerIp: many,
        connectionsPerIp: 10_000,
        sessionsPerPrincipal: many,
      },
    },
    egress: { allowPrivateNetworks: true },
    mcpServers: {
      chaos: {
        type: 'stdio',
        command: process.execPath,
        args: ['--import', tsx, markServer],
        env: { MARKER_FILE: o.markerFile, STAMP_FILE: o.stampFile },
        timeout: 30_000,
      },
    },
    toolPolicy: {
      default: 'allow',
      timeoutMs: APPROVAL_TIMEOUT_MS,
      rules: [{ server: 'chaos', tool: 'mark_ask', action: 'ask' }],
    },
  };
}
