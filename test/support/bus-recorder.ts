/**
 * Records every event of a bus as a client sees it, and waits for the one a test needs (no sleeps): a stored fact
 * (`agent.stored`) is recorded as the bus event of its frame, `agent.<frame>` (none for a fact clients never see), so
 * tests name the frames of the wire; every other event as it is.
 */
import {
  frameOfEvent,
  STORED_EVENT,
  type AgentFrameData,
  type AwaitingData,
  type FrameName,
} from '../../src/agent/index.ts';
import type { Bus, Envelope, EventSpec } from '../../src/bus/index.ts';
import type { McpEvents } from '../../src/tools/index.ts';
import { PATIENT } from './wait.ts';

/** The events a recorder names: one per client frame, `agent.<frame>`, the MCP events and `agent.awaiting`. */
export type FrameEvents = { [K in FrameName as `agent.${K}`]: AgentFrameData[K] } & McpEvents & {
    'agent.awaiting': AwaitingData;
  };

export interface BusRecorder<E extends EventSpec = FrameEvents> {
  readonly events: Envelope[];
  /** Payloads of the recorded events named `name`, in order. */
  named: <N extends keyof E & string>(name: N) => E[N][];
  /** The first recorded event matching `pred` (already seen, or the next one), within `timeoutMs`. */
  until: (pred: (e: Envelope) => boolean, timeoutMs?: number) => Promise<Envelope>;
  /** The `agent.response` or `agent.error` that ends the turn queued with `correlationId`. */
  turnEnd: (correlationId: string, timeoutMs?: number) => Promise<Envelope>;
  stop: () => void;
}

/** An event as a client sees it (see above); undefined for a fact with no frame. */
export function asClientEvent(e: Envelope): Envelope | undefined {
  if (e.name !== STORED_EVENT) return e;
  const frame = frameOfEvent(e.name, e.payload);
  return frame && { ...e, name: `agent.${frame.event}`, payload: frame.data };
}

export function recordBus(bus: Pick<Bus<never, EventSpec>, 'onAny'>): BusRecorder {
  const events: Envelope[] = [];
  const waiters = new Set<(e: Envelope) => void>();
  const off = bus.onAny((raw) => {
    const e = asClientEvent(raw);
    if (!e) return;
    events.push(e);
    for (const w of [...waiters]) w(e);
  });
  const until = (pred: (e: Envelope) => boolean, timeoutMs = PATIENT.timeout) => {
    const seen = events.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise<Envelope>((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`no matching bus event within ${timeoutMs} ms; saw ${events.map((e) => e.name).join(', ')}`));
      }, timeoutMs);
      const check = (e: Envelope) => {
        if (!pred(e)) return;
        clearTimeout(timer);
        waiters.delete(check);
        resolve(e);
      };
      waiters.add(check);
    });
  };
  return {
    events,
    named: (name) => events.filter((e) => e.name === name).map((e) => e.payload as never),
    until,
    turnEnd: (correlationId, timeoutMs) =>
      until(
        (e) => e.correlationId === correlationId && (e.name === 'agent.response' || e.name === 'agent.error'),
        timeoutMs,
      ),
    stop: off,
  };
}
