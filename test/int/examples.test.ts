/**
 * The shipped agent files start as documented: through the `agentd` command (bin/agentd.js), from
 * a folder other than the repository, with no variable beyond the provider key they name.
 */
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listeningPort, runAgentd } from '../support/agentd-process.ts';
import { PATIENT } from '../support/wait.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const files = [
  'agents/default.yml',
  ...readdirSync(join(ROOT, 'agents/examples'))
    .filter((f) => f.endsWith('.yml'))
    .map((f) => `agents/examples/${f}`),
];

async function start(file: string): Promise<{ port: number; stop: () => Promise<number | null> }> {
  const agentd = runAgentd(
    ['--agent', join(ROOT, file), '--web-port', '0'],
    { OPENAI_API_KEY: 'sk-example-not-a-real-key-000000' },
    // A folder of its own: a ./data/sessions another run left in the shared temporary folder is not this start's.
    { command: [process.execPath, join(ROOT, 'bin/agentd.js')], cwd: mkdtempSync(join(tmpdir(), 'agentd-example-')) },
  );
  const port = await listeningPort(agentd);
  return {
    port,
    stop: async () => {
      agentd.child.kill('SIGTERM');
      const code = await agentd.exited;
      if (code !== 0) console.error(agentd.out().slice(-3000), agentd.err().slice(-3000));
      return code;
    },
  };
}

describe('shipped agent files', () => {
  it.each(files)(
    '%s starts through the agentd command from another folder',
    async (file) => {
      const svc = await start(file);
      try {
        const health = (await (await fetch(`http://127.0.0.1:${svc.port}/api/health`)).json()) as { status: string };
        expect(health.status).toBe('healthy');
      } finally {
        expect(await svc.stop()).toBe(0);
      }
    },
    90_000,
  );

  it('with-mcp-servers.yml finds its tool servers and sandbox relative to its own folder', async () => {
    const svc = await start('agents/examples/with-mcp-servers.yml');
    try {
      const poll = async () =>
        (
          (await (await fetch(`http://127.0.0.1:${svc.port}/api/mcp/servers`)).json()) as {
            servers: { name: string; status: string }[];
          }
        ).servers;
      await expect
        .poll(async () => (await poll()).filter((s) => s.name !== 'remote').map((s) => s.status), PATIENT)
        .toEqual(['connected', 'connected']);
    } finally {
      await svc.stop();
    }
  }, 90_000);
});
