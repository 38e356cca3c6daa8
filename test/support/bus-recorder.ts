/** Records every event of a bus, and waits for the one a test needs (no sleeps). */
import type { Bus, Envelope, EventSpec } from '../../src/bus/index.ts';
import { PATIENT } from './wait.ts';

export interface BusRecorder<E extends EventSpec> {
  readonly events: Envelope[];
  /** Payloads of the recorded events named `name`, in order. */
  named: <N extends keyof E & string>(name: N) => E[N][];
  /** The first recorded event matching `pred` (already seen, or the next one), within `timeoutMs`. */
  until: (pred: (e: Envelope) => boolean, timeoutMs?: number) => Promise<Envelope>;
  /** The `agent.response` or `agent.error` that ends the turn queued with `correlationId`. */
  turnEnd: (correlationId: string, timeoutMs?: number) => Promise<Envelope>;
  stop: () => void;
}

export function recordBus<E extends EventSpec>(bus: Pick<Bus<never, E>, 'onAny'>): BusRecorder<E> {
  const events: Envelope[] = [];
  const waiters = new Set<(e: Envelope) => void>();
  const off = bus.onAny((e) => {
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
