/**
 * The side-by-side table of `npm run bench:peers`, from the windows it measured: per measure the
 * median over the rounds (with the range when there were several), the model stub alone where it
 * applies, and agentd's lead over the peer. Pure: no processes, no clock.
 */
import { median } from '../lib/compare-table.ts';

/** One window of instant turns against one server (agentd, the peer, or the stub alone). */
export interface TurnsWindow {
  turnsPerSec: number;
  /** CPU of the server (all its threads) per answered turn, ms. */
  cpuMsPerTurn: number;
  p50: number;
  p99: number;
  requests: number;
  /** Failed requests and non-2xx answers. */
  errors: number;
  /** Cores over the window: `server`, `simulator`, `loadgen`, `other` (the rest of the machine). */
  cores: Record<string, number>;
}

/** One window of paced streams against one server, or straight to the simulator (`direct`). */
export interface StreamsWindow {
  /** Time from sending a message to its first content chunk, ms. */
  ttfcP50: number;
  ttfcP99: number;
  chunks: number;
  chunksPerSec: number;
  turns: number;
  errors: number;
  /** CPU of the server (all threads) per chunk received in the window, µs (per-turn work included). */
  cpuUsPerChunk: number;
  rssPeakMb: number;
  cores: Record<string, number>;
}

export interface PeerRounds {
  turns: { agentd: TurnsWindow[]; peer: TurnsWindow[]; stub: TurnsWindow[] };
  streams: { agentd: StreamsWindow[]; peer: StreamsWindow[]; direct: StreamsWindow[] };
}

export type Unit = '/s' | ' ms' | ' µs' | ' MB' | ' %';

/** One row of the table: each side's value per round. */
export interface Measure {
  id: string;
  label: string;
  unit: Unit;
  better: 'lower' | 'higher';
  agentd: number[];
  peer: number[];
  /** The model stub alone, where the measure applies to it. */
  stub?: number[];
}

/** Round `i`'s value of each window list, combined with the same round of another list. */
const zip = <A, B>(a: A[], b: B[], f: (x: A, y: B) => number) => a.slice(0, b.length).map((x, i) => f(x, b[i]!));

/** The measures of the table, in its order. */
export function measures(r: PeerRounds, load: { clients: number; streams: number }): Measure[] {
  const { turns: t, streams: s } = r;
  const share = (w: TurnsWindow, stub: TurnsWindow) =>
    stub.turnsPerSec > 0 ? (100 * w.turnsPerSec) / stub.turnsPerSec : 0;
  return [
    {
      id: 'turns-per-sec',
      label: `instant turns/s, ${load.clients} clients`,
      unit: '/s',
      better: 'higher',
      agentd: t.agentd.map((w) => w.turnsPerSec),
      peer: t.peer.map((w) => w.turnsPerSec),
      stub: t.stub.map((w) => w.turnsPerSec),
    },
    {
      id: 'turns-share-of-stub',
      label: 'instant turns/s against the stub alone on the same core',
      unit: ' %',
      better: 'higher',
      agentd: zip(t.agentd, t.stub, share),
      peer: zip(t.peer, t.stub, share),
      stub: t.stub.map(() => 100),
    },
    {
      id: 'cpu-per-turn',
      label: 'server CPU per turn',
      unit: ' ms',
      better: 'lower',
      agentd: t.agentd.map((w) => w.cpuMsPerTurn),
      peer: t.peer.map((w) => w.cpuMsPerTurn),
      stub: t.stub.map((w) => w.cpuMsPerTurn),
    },
    {
      id: 'added-ttfc-p50',
      label: `added first chunk p50, ${load.streams} paced streams`,
      unit: ' ms',
      better: 'lower',
      agentd: zip(s.agentd, s.direct, (w, d) => w.ttfcP50 - d.ttfcP50),
      peer: zip(s.peer, s.direct, (w, d) => w.ttfcP50 - d.ttfcP50),
    },
    {
      id: 'added-ttfc-p99',
      label: `added first chunk p99, ${load.streams} paced streams`,
      unit: ' ms',
      better: 'lower',
      agentd: zip(s.agentd, s.direct, (w, d) => w.ttfcP99 - d.ttfcP99),
      peer: zip(s.peer, s.direct, (w, d) => w.ttfcP99 - d.ttfcP99),
    },
    {
      id: 'cpu-per-chunk',
      label: `server CPU per chunk, ${load.streams} streams`,
      unit: ' µs',
      better: 'lower',
      agentd: s.agentd.map((w) => w.cpuUsPerChunk),
      peer: s.peer.map((w) => w.cpuUsPerChunk),
    },
    {
      id: 'rss-peak',
      label: `RSS peak, ${load.streams} streams`,
      unit: ' MB',
      better: 'lower',
      agentd: s.agentd.map((w) => w.rssPeakMb),
      peer: s.peer.map((w) => w.rssPeakMb),
    },
  ];
}

/** agentd's lead over the peer on the medians: above 1 agentd is ahead (peer ÷ agentd for costs, agentd ÷ peer for rates); undefined unless both are positive. */
export function lead(m: Measure): number | undefined {
  const a = median(m.agentd);
  const p = median(m.peer);
  if (!(a > 0 && p > 0)) return undefined;
  return m.better === 'lower' ? p / a : a / p;
}

/** 3 significant digits at most, thousands grouped. */
export function num(v: number): string {
  if (!Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  return a < 10 ? v.toFixed(2) : a < 100 ? v.toFixed(1) : Math.round(v).toLocaleString('en-US');
}

/** The median with its unit, and the range over the rounds when there were several. */
export function cell(values: number[] | undefined, unit: Unit): string {
  if (!values?.length) return '—';
  const range = values.length > 1 ? ` (${num(Math.min(...values))}–${num(Math.max(...values))})` : '';
  return `${num(median(values))}${unit}${range}`;
}

export function formatLead(l: number | undefined): string {
  return l === undefined ? '—' : `×${l >= 10 ? l.toFixed(0) : l.toFixed(2)}`;
}

/** The table: a head naming the peer and the rounds, a row per measure. */
export function peerTable(rows: Measure[], peer: string, rounds: number): { head: string[]; rows: string[][] } {
  const of = rounds > 1 ? `median of ${rounds} windows (range)` : 'one window';
  return {
    head: [`measure (${of})`, 'agentd', peer, 'the model stub alone', "agentd's lead"],
    rows: rows.map((m) => [
      m.label,
      cell(m.agentd, m.unit),
      cell(m.peer, m.unit),
      cell(m.stub, m.unit),
      m.id === 'turns-share-of-stub' ? '' : formatLead(lead(m)),
    ]),
  };
}
