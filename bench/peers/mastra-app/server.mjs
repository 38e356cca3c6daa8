/**
 * The peer under `npm run bench:peers` (bench/peers/): a minimal Mastra agent on an OpenAI-compatible
 * model (the model simulator at MODEL_URL), served by Mastra's Hono adapter on 127.0.0.1:PORT (0: a
 * free port), printing `listening on http://127.0.0.1:<port>` once it serves. Built into one file by
 * build.mjs, as `mastra build` bundles an app.
 *
 * The bench uses `POST /api/agents/bench/generate` (one JSON answer: instant turns) and
 * `POST /api/agents/bench/stream` (SSE: streamed turns). No memory, tools or storage are configured:
 * every other setting is Mastra's default (NODE_ENV=production, as a deployment runs).
 */
import { serve } from '@hono/node-server';
import { Agent } from '@mastra/core/agent';
import { Mastra } from '@mastra/core/mastra';
import { MastraServer } from '@mastra/hono';
import { Hono } from 'hono';

const modelUrl = process.env.MODEL_URL;
if (!modelUrl) throw new Error('MODEL_URL is required (the simulator, e.g. http://127.0.0.1:4010/v1)');

const bench = new Agent({
  id: 'bench',
  name: 'bench',
  instructions: 'You are a benchmark agent.',
  model: { providerId: 'sim', modelId: 'sim-model', url: modelUrl, apiKey: 'bench-key' },
});
const mastra = new Mastra({ agents: { bench } });
const app = new Hono();
await new MastraServer({ app, mastra }).init();

const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT ?? 0) }, (info) => {
  console.log(`listening on http://127.0.0.1:${info.port}`);
});
for (const signal of ['SIGTERM', 'SIGINT']) process.once(signal, () => server.close(() => process.exit(0)));
