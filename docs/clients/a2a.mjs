// A minimal A2A client of agentd with the official SDK (npm install @a2a-js/sdk): fetches the agent
// card, streams one message (A2A v1.0), prints the reply as it comes and the task's final state;
// exits 0 when the task completed.
//
//   node docs/clients/a2a.mjs "Hello"                         # http://127.0.0.1:3001
//   AGENTD_URL=https://agent.example AGENTD_API_KEY=... node docs/clients/a2a.mjs "Hello"
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';

const base = process.env.AGENTD_URL ?? 'http://127.0.0.1:3001';
const key = process.env.AGENTD_API_KEY;
const authed = (input, init = {}) => {
  const headers = new Headers(init.headers);
  if (key) headers.set('Authorization', `Bearer ${key}`);
  return fetch(input, { ...init, headers });
};
const options = ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
  transports: [new JsonRpcTransportFactory({ fetchImpl: authed })],
});
const client = await new ClientFactory(options).createFromUrl(base); // reads /.well-known/agent-card.json

const text = process.argv.slice(2).join(' ') || 'Hello';
const message = {
  messageId: randomUUID(),
  contextId: '',
  taskId: '',
  role: Role.ROLE_USER,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: [],
  parts: [{ content: { $case: 'text', value: text }, metadata: undefined, filename: '', mediaType: '' }],
};
let state;
for await (const { payload } of client.sendMessageStream({ message })) {
  if (payload?.$case === 'task') process.stderr.write(`task ${payload.value.id}\n`);
  if (payload?.$case === 'artifactUpdate')
    for (const p of payload.value.artifact.parts) process.stdout.write(p.content?.value ?? '');
  if (payload?.$case === 'statusUpdate') state = payload.value.status.state;
}
process.stdout.write('\n');
process.stderr.write(`state ${TaskState[state]}\n`);
process.exitCode = state === TaskState.TASK_STATE_COMPLETED ? 0 : 1;
