/**
 * bench:peers' pure parts: reading the servers' SSE streams (events cut anywhere by the network,
 * classified without a JSON parse) and the side-by-side table (medians per measure, added first
 * chunk against the same round straight to the simulator, agentd's lead, the stub's share).
 */
import { describe, expect, it } from 'vitest';
import { markdownTable } from '../../bench/lib/markdown.ts';
import { mastraEvent, openAiEvent, sseSplitter } from '../../bench/lib/sse.ts';
import { peerResult, type PeerRun } from '../../bench/peers/result.ts';
import {
  lead,
  measures,
  peerTable,
  type PeerRounds,
  type StreamsWindow,
  type TurnsWindow,
} from '../../bench/peers/table.ts';

const turns = (turnsPerSec: number, cpuMsPerTurn: number): TurnsWindow => ({
  turnsPerSec,
  cpuMsPerTurn,
  p50: 30,
  p99: 60,
  requests: turnsPerSec * 5,
  errors: 0,
  cores: { server: 1, other: 0.05 },
});
const streams = (ttfcP50: number, ttfcP99: number, cpuUsPerChunk = 0, rssPeakMb = 0): StreamsWindow => ({
  ttfcP50,
  ttfcP99,
  chunks: 24_000,
  chunksPerSec: 4_000,
  turns: 600,
  errors: 0,
  cpuUsPerChunk,
  rssPeakMb,
  cores: { server: 0.6, other: 0 },
});

const rounds: PeerRounds = {
  turns: {
    agentd: [turns(540, 1.8), turns(560, 1.7), turns(550, 1.9)],
    peer: [turns(120, 8), turns(125, 8.1), turns(123, 8.2)],
    stub: [turns(7_000, 0.1), turns(8_000, 0.1), turns(7_500, 0.1)],
  },
  streams: {
    direct: [streams(1, 10), streams(2, 20), streams(1, 12)],
    agentd: [streams(6, 130, 150, 320), streams(7, 140, 160, 330), streams(5, 100, 155, 326)],
    peer: [streams(480, 1_100, 460, 570), streams(490, 1_000, 470, 580), streams(470, 1_200, 464, 574)],
  },
};

describe('bench:peers SSE reading', () => {
  it('splits events wherever the network cut them', () => {
    const events: string[] = [];
    const feed = sseSplitter((e) => events.push(e));
    for (const piece of ['data: {"a"', ':1}\n', '\ndata: {"b":2}\n\ndata: ', '{"c":3}\n\n']) feed(piece);
    expect(events).toEqual(['data: {"a":1}', 'data: {"b":2}', 'data: {"c":3}']);
  });

  it("counts Mastra's text deltas as chunks and its errors as failed turns", () => {
    const run = 'c1fc8020-9287-42b3-8af4-c2e5c2b98d6d';
    expect(
      mastraEvent(`data: {"type":"start","runId":"${run}","from":"AGENT","payload":{"id":"bench"}}`),
    ).toBeUndefined();
    expect(
      mastraEvent(`data: {"runId":"${run}","from":"AGENT","type":"step-start","payload":{"warnings":[]}}`),
    ).toBeUndefined();
    expect(
      mastraEvent(
        `data: {"type":"text-delta","runId":"${run}","from":"AGENT","payload":{"id":"txt-0","text":" lorem"}}`,
      ),
    ).toBe('chunk');
    expect(
      mastraEvent(
        `data: {"runId":"${run}","from":"AGENT","type":"step-finish","payload":{"output":{"steps":[{"content":[{"type":"text-delta"}]}]}}}`,
      ),
    ).toBeUndefined();
    expect(mastraEvent(`data: {"type":"error","runId":"${run}","payload":{"error":"boom"}}`)).toBe('error');
    expect(mastraEvent('data: [DONE]')).toBeUndefined();
  });

  it("counts the simulator's non-empty content deltas as chunks", () => {
    expect(
      openAiEvent('data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}'),
    ).toBeUndefined();
    expect(openAiEvent('data: {"id":"c","choices":[{"index":0,"delta":{"content":" lorem"}}]}')).toBe('chunk');
    expect(openAiEvent('data: {"error":{"message":"Simulated failure","type":"server_error"}}')).toBe('error');
    expect(openAiEvent('data: [DONE]')).toBeUndefined();
  });
});

describe('bench:peers table', () => {
  const all = measures(rounds, { clients: 20, streams: 200 });
  const byId = (id: string) => all.find((m) => m.id === id)!;

  it('measures first-chunk time as added to the same round straight to the simulator', () => {
    expect(byId('added-ttfc-p50').agentd).toEqual([5, 5, 4]);
    expect(byId('added-ttfc-p99').peer).toEqual([1_090, 980, 1_188]);
  });

  it("gives agentd's lead in each measure's direction, and none when a side is not positive", () => {
    expect(lead(byId('turns-per-sec'))).toBeCloseTo(550 / 123);
    expect(lead(byId('cpu-per-turn'))).toBeCloseTo(8.1 / 1.8);
    expect(lead(byId('rss-peak'))).toBeCloseTo(574 / 326);
    expect(lead({ ...byId('added-ttfc-p50'), agentd: [-1, 0, -2] })).toBeUndefined();
  });

  it('prints medians with their range, the stub where it applies and the ratios', () => {
    const table = peerTable(all, 'Mastra 1.71.0', 3);
    expect(table.head).toEqual([
      'measure (median of 3 windows (range))',
      'agentd',
      'Mastra 1.71.0',
      'the model stub alone',
      "agentd's lead",
    ]);
    expect(table.rows[0]).toEqual([
      'instant turns/s, 20 clients',
      '550/s (540–560)',
      '123/s (120–125)',
      '7,500/s (7,000–8,000)',
      '×4.47',
    ]);
    expect(table.rows[1]).toEqual([
      'instant turns/s against the stub alone on the same core',
      '7.33 % (7.00–7.71)',
      '1.64 % (1.56–1.71)',
      '100 % (100–100)',
      '',
    ]);
    expect(table.rows[3]).toEqual([
      'added first chunk p50, 200 paced streams',
      '5.00 ms (4.00–5.00)',
      '479 ms (469–488)',
      '—',
      '×96',
    ]);
    expect(markdownTable(table.head, [table.rows[0]!]).split('\n')).toEqual([
      "| measure (median of 3 windows (range)) | agentd | Mastra 1.71.0 | the model stub alone | agentd's lead |",
      '| --- | --- | --- | --- | --- |',
      '| instant turns/s, 20 clients | 550/s (540–560) | 123/s (120–125) | 7,500/s (7,000–8,000) | ×4.47 |',
    ]);
    expect(peerTable(all, 'Mastra', 1).head[0]).toBe('measure (one window)');
  });

  it("writes the stub's share as the goal, with the cause when it is missed", () => {
    const load = { loadavg: [0.1, 0.2, 0.3], busyCores: 0.02 };
    const run: PeerRun = {
      rounds,
      load: {
        clients: 20,
        turnsMs: 5_000,
        streams: 200,
        streamMeasureMs: 6_000,
        message: '[[len:40]] [[rate:20]] stream please',
        rounds: 3,
      },
      cpus: {
        servers: '0',
        loadgen: '1',
        allowed: { agentd: '0', mastra: '0', stub: '0', simulator: '1', loadgen: '1' },
      },
      versions: {
        agentd: '0.1.0',
        mastra: {
          '@mastra/core': '1.71.0',
          '@mastra/hono': '1.7.9',
          '@mastra/server': '1.67.0',
          hono: '4.13.19',
          '@hono/node-server': '2.1.8',
        },
        node: 'v20.20.2',
      },
      engine: 'node',
      machineLoad: { before: load, after: load },
    };
    const result = peerResult(run);
    expect(result.goals).toEqual([
      expect.objectContaining({ id: 'turns-share-of-stub', target: 25, better: 'higher', value: 7.3 }),
    ]);
    expect(result.goals[0]?.note).toContain('1.80 ms of CPU per turn where the stub spends 0.10 ms');
    expect(result.notes.some((n) => n.includes('Node >= 22.13'))).toBe(true);
    expect(
      peerResult({ ...run, versions: { ...run.versions, node: 'v22.13.0' } }).notes.some((n) =>
        n.includes('Node >= 22.13'),
      ),
    ).toBe(false);
    expect(Object.fromEntries(result.rows)['CPUs allowed (/proc)']).toBe(
      'agentd 0, mastra 0, stub 0, simulator 1, loadgen 1',
    );
  });
});
