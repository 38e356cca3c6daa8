/** Every benchmark, in the order a run takes them (`quick` ones form `npm run bench`). */
import type { Bench } from './lib/bench.ts';
import { agUiBench } from './suites/ag-ui.ts';
import { apisBench } from './suites/apis.ts';
import { chunksBench } from './suites/chunks.ts';
import { compactionBench } from './suites/compaction.ts';
import { deliveriesBench } from './suites/deliveries.ts';
import { fanoutBench } from './suites/fanout.ts';
import { idleBench } from './suites/idle.ts';
import { listTasksBench } from './suites/list-tasks.ts';
import { listTasksScaleBench } from './suites/list-tasks-scale.ts';
import { memorySizeBench } from './suites/memory-size.ts';
import { restBench } from './suites/rest.ts';
import { scaleBench } from './suites/scale.ts';
import { slowReadersBench } from './suites/slow-readers.ts';
import { soakBench } from './suites/soak.ts';
import { startupBench } from './suites/startup.ts';
import { streamingBench } from './suites/streaming.ts';
import { ttfcBreakdownBench } from './suites/ttfc-breakdown.ts';
import { turnCostBench } from './suites/turn-cost.ts';
import { turnsBench } from './suites/turns.ts';

export const BENCHES: Bench[] = [
  startupBench,
  streamingBench(50, true),
  streamingBench(200, true),
  streamingBench(500, false),
  streamingBench(1000, false),
  ttfcBreakdownBench,
  chunksBench,
  agUiBench,
  fanoutBench,
  slowReadersBench,
  idleBench,
  restBench,
  turnsBench,
  turnCostBench,
  apisBench,
  listTasksBench,
  listTasksScaleBench,
  soakBench,
  compactionBench,
  deliveriesBench,
  memorySizeBench,
  scaleBench,
];

/** Every result the README's generated section shows, in its order: the benchmarks, then `peers` (its own command, `npm run bench:peers`). */
export const REPORTED: string[] = [...BENCHES.map((b) => b.name), 'peers'];
