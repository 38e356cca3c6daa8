/** Writes agents/agent.schema.json from the zod schema; `--check` only compares, exiting 1 when it is stale. */
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { agentConfigSchema } from './schema.ts';

const target = fileURLToPath(new URL('../../agents/agent.schema.json', import.meta.url));

const schema = z.toJSONSchema(agentConfigSchema, { io: 'input', target: 'draft-2020-12' });
const wanted = `${JSON.stringify({ ...schema, title: 'agentd agent configuration' }, null, 2)}\n`;
if (process.argv.includes('--check')) {
  const current = await readFile(target, 'utf8').catch(() => '');
  if (current !== wanted) {
    console.error(`${target} is stale: run npm run schema and commit the result`);
    process.exit(1);
  }
  console.log('agent.schema.json is up to date');
} else {
  await writeFile(target, wanted);
  console.log(`wrote ${target}`);
}
