/**
 * The chaos run's checker: a pure function of what a run recorded (recorded.ts) to the violations it holds, by kind.
 * Every kind is always present in the answer (0 when clean), so summaries of runs compare line by line:
 *
 * - `ackedNotOneEnding`: a message agentd acknowledged whose turn has no ending, or more than one, in its log
 *   (an ending is a stored `response` or `turnFailed`).
 * - `turnNeverEnded`: a turn its log started (a `userMessage` or a stored queued message, which agentd acknowledged
 *   or was about to) and never ended, once the run settled.
 * - `turnTwoEndings`: a turn (any, acknowledged or not) with two or more endings in its log.
 * - `callTwoResults`: a tool call (by turn and call id) with two or more `toolResult`s in its log.
 * - `markerRunTwice`: a call of the non-idempotent marker tool that ran more than once (its unique key has two or
 *   more lines in the marker file).
 * - `seqGap`, `seqRepeat`: a session's export whose seqs are not 1, 2, 3, ... (a number skipped; a number again or
 *   going back).
 * - `wsDuplicate`: a durable frame (one the history has, by seq and event) a WebSocket client saw more often than
 *   the history holds it, across its reconnects and resumes.
 * - `wsMissed`: a durable frame after the client's first `since` and up to the last durable seq it saw, never seen.
 * - `scheduleTickTwice`: a schedule's tick whose message is in its session's log as two turns.
 * - `scheduleTickNeverFired`: a claimed tick whose message never reached its session (the run still `claimed`, or
 *   naming a turn its session's log does not hold).
 * - `webhookConflict`: a `webhook-id` delivered with two different bodies.
 * - `webhookMissing`: a turn ending in a log with no `turn.completed` / `turn.failed` delivery naming its session
 *   and seq that the receiver accepted.
 * - `pushMissing`: an A2A task with a push config whose turn ended, with no push of a terminal state.
 * - `mcpTaskWrong`: an MCP task (2026-07-28 wire) whose `tasks/get` status disagrees with its turn's first ending in
 *   the log, as src/mcp-face maps it there: a `response` is `completed`; a `turnFailed` by a cancel or a reset is
 *   `cancelled`, any other `completed` with `result.isError` (or `failed`); a turn with no ending, or a `tasks/get`
 *   that answered no status, is wrong too.
 *
 * - `lostSilently`, `seqReused`, `callerLeftWaiting`: what a store that lost data must not do (check-loss.ts), counted
 *   in every run; in a run with lossy faults (`lossyFaults`), an acknowledged turn the final log holds nothing of is
 *   counted in `lost` (noticed or silently) instead of `ackedNotOneEnding`, and the WebSocket checks compare what each
 *   client saw under the last store identity it was told (it dropped what it held before).
 *
 * `examples` keeps the first few instances of each kind, for people reading a failed run.
 */
import { checkLoss, lostAcks, type LossCount } from './check-loss.ts';
import type { LogLine, Recorded } from './recorded.ts';

export const VIOLATION_KINDS = [
  'ackedNotOneEnding',
  'turnNeverEnded',
  'turnTwoEndings',
  'callTwoResults',
  'markerRunTwice',
  'seqGap',
  'seqRepeat',
  'wsDuplicate',
  'wsMissed',
  'scheduleTickTwice',
  'scheduleTickNeverFired',
  'webhookConflict',
  'webhookMissing',
  'pushMissing',
  'mcpTaskWrong',
  'lostSilently',
  'seqReused',
  'callerLeftWaiting',
] as const;
export type ViolationKind = (typeof VIOLATION_KINDS)[number];

export interface CheckResult {
  violations: Record<ViolationKind, number>;
  /** Acknowledged turns the store lost: noticed (fine) or silently (`lostSilently`), and by the fault that lost them. */
  lost: LossCount;
  examples: Partial<Record<ViolationKind, string[]>>;
}

const EXAMPLES = 5;
const ENDINGS = new Set(['response', 'turnFailed']);
const TERMINAL = /^(TASK_STATE_)?(COMPLETED|FAILED|CANCELED|CANCELLED)$/i;

const countBy = <T>(items: Iterable<T>, key: (item: T) => string): Map<string, number> => {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
};

/** Endings per turn of one session's log. */
const endingsOf = (log: LogLine[]) =>
  countBy(
    log.filter((l) => ENDINGS.has(l.event.type)),
    (l) => l.event.turnId ?? '',
  );

export function check(recorded: Recorded): CheckResult {
  const violations = Object.fromEntries(VIOLATION_KINDS.map((k) => [k, 0])) as Record<ViolationKind, number>;
  const examples: CheckResult['examples'] = {};
  const report = (kind: ViolationKind, what: string, n = 1) => {
    violations[kind] += n;
    const list = (examples[kind] ??= []);
    if (list.length < EXAMPLES) list.push(what);
  };
  const sessions = new Map(recorded.sessions.map((s) => [s.id, s]));
  const endings = new Map(recorded.sessions.map((s) => [s.id, endingsOf(s.log)]));

  checkLogs(recorded, endings, report);
  const lost = checkLoss(recorded, report);
  const expectedLost = new Set(
    (recorded.lossyFaults ?? []).length > 0 ? lostAcks(recorded).map((a) => `${a.sessionId}\u0000${a.turnId}`) : [],
  );
  const acked = new Map(recorded.acked.map((a) => [`${a.sessionId}\u0000${a.turnId}`, a]));
  for (const [key, a] of acked) {
    if (expectedLost.has(key)) continue;
    const n = endings.get(a.sessionId)?.get(a.turnId) ?? 0;
    if (n !== 1) report('ackedNotOneEnding', `${a.sessionId} turn ${a.turnId} (${a.via}): ${n} endings`);
  }
  for (const [key, n] of countBy(recorded.markerLines, (l) => l.trim())) {
    if (key !== '' && n > 1) report('markerRunTwice', `marker ${key} ran ${n} times`);
  }
  checkWs(recorded, sessions, report);
  checkSchedules(recorded, sessions, report);
  checkDeliveries(recorded, endings, report);
  checkMcpTasks(recorded, sessions, report);
  return { violations, lost, examples };
}

type Report = (kind: ViolationKind, what: string, n?: number) => void;

function checkLogs(recorded: Recorded, endings: Map<string, Map<string, number>>, report: Report): void {
  for (const s of recorded.sessions) {
    let prev = 0;
    for (const line of s.log) {
      if (line.seq <= prev) report('seqRepeat', `${s.id}: seq ${line.seq} after ${prev}`);
      else if (line.seq > prev + 1) report('seqGap', `${s.id}: seq ${line.seq} after ${prev}`);
      prev = Math.max(prev, line.seq);
    }
    const ended = endings.get(s.id) ?? new Map<string, number>();
    for (const [turnId, n] of ended) {
      if (n > 1) report('turnTwoEndings', `${s.id} turn ${turnId}: ${n} endings`);
    }
    const started = new Set(
      s.log
        .filter((l) => l.event.type === 'userMessage' || l.event.type === 'messageQueued')
        .map((l) => l.event.turnId),
    );
    for (const turnId of started) {
      if (turnId !== undefined && !ended.has(turnId)) report('turnNeverEnded', `${s.id} turn ${turnId}`);
    }
    const results = s.log.filter((l) => l.event.type === 'toolResult');
    for (const [call, n] of countBy(results, (l) => `${l.event.turnId} ${String(l.event['callId'])}`)) {
      if (n > 1) report('callTwoResults', `${s.id} turn/call ${call}: ${n} results`);
    }
  }
}

function checkWs(recorded: Recorded, sessions: Map<string, Recorded['sessions'][number]>, report: Report): void {
  for (const whole of recorded.ws) {
    const view = lastStoreOf(whole);
    const history = sessions.get(view.sessionId)?.history ?? [];
    // A frame is the history's when its seq, event and turn (if it names one) are: a turn's transient `error` repeats
    // the seq of the last durable frame, which may be another turn's stored `error`.
    const keyOf = (seq: unknown, event: string, turnId: unknown) =>
      `${String(seq)}\u0000${event}${typeof turnId === 'string' ? `\u0000${turnId}` : ''}`;
    const held = countBy(
      history.filter((f) => typeof f.data.seq === 'number'),
      (f) => keyOf(f.data.seq, f.event, f.data['turnId']),
    );
    const durable = view.frames.filter((f) => held.has(keyOf(f.seq, f.event, f.turnId)));
    const seen = countBy(durable, (f) => keyOf(f.seq, f.event, f.turnId));
    const upTo = Math.max(view.from, ...durable.map((f) => f.seq));
    for (const [key, n] of seen) {
      const extra = n - (held.get(key) ?? 0);
      if (extra > 0)
        report('wsDuplicate', `${view.client} ${view.sessionId}: ${key.replaceAll('\u0000', ' ')} x${n}`, extra);
    }
    for (const [key, n] of held) {
      const seq = Number(key.split('\u0000')[0]);
      if (seq <= view.from || seq > upTo) continue;
      const missed = n - (seen.get(key) ?? 0);
      if (missed > 0) report('wsMissed', `${view.client} ${view.sessionId}: ${key.replaceAll('\u0000', ' ')}`, missed);
    }
  }
}

function checkSchedules(recorded: Recorded, sessions: Map<string, Recorded['sessions'][number]>, report: Report): void {
  for (const schedule of recorded.schedules) {
    const log = sessions.get(schedule.sessionId)?.log ?? [];
    const messages = log.filter((l) => l.event.type === 'userMessage');
    for (const [content, n] of countBy(messages, (l) => String(l.event['content']))) {
      if (n > 1) report('scheduleTickTwice', `${schedule.id}: "${content}" ran ${n} times`);
    }
    const turns = new Set(
      log.filter((l) => l.event.type === 'userMessage' || l.event.type === 'messageQueued').map((l) => l.event.turnId),
    );
    for (const run of schedule.runs) {
      if (run.status === 'claimed') report('scheduleTickNeverFired', `${schedule.id} ${run.plannedAt}: still claimed`);
      else if (run.turnId !== undefined && !turns.has(run.turnId))
        report(
          'scheduleTickNeverFired',
          `${schedule.id} ${run.plannedAt}: ${run.status}, turn ${run.turnId} not in log`,
        );
    }
  }
}

function checkDeliveries(recorded: Recorded, endings: Map<string, Map<string, number>>, report: Report): void {
  const delivered = new Set<string>();
  const bodies = new Map<string, Set<string>>();
  for (const hit of recorded.webhooks) {
    const set = bodies.get(hit.id) ?? new Set<string>();
    set.add(canonical(hit.body));
    bodies.set(hit.id, set);
    const body = parse(hit.body) as { type?: string; data?: { sessionId?: string; seq?: number } } | undefined;
    if (body?.data && hit.accepted) delivered.add(`${body.type}\u0000${body.data.sessionId}\u0000${body.data.seq}`);
  }
  for (const [id, set] of bodies) if (set.size > 1) report('webhookConflict', `${id}: ${set.size} different bodies`);
  if (recorded.webhooksOn) {
    for (const s of recorded.sessions) {
      for (const line of s.log) {
        if (!ENDINGS.has(line.event.type)) continue;
        const type = line.event.type === 'response' ? 'turn.completed' : 'turn.failed';
        if (!delivered.has(`${type}\u0000${s.id}\u0000${line.seq}`))
          report('webhookMissing', `${s.id} seq ${line.seq} ${type}`);
      }
    }
  }
  const pushed = new Set(recorded.pushes.filter((p) => TERMINAL.test(p.state)).map((p) => p.taskId));
  for (const task of recorded.a2aTasks) {
    const ended = (endings.get(task.sessionId)?.get(task.turnId) ?? 0) > 0;
    if (ended && !pushed.has(task.taskId)) report('pushMissing', `${task.taskId}: ended, no terminal push`);
  }
}

/** What `tasks/get` must read for a turn ending (`undefined`: no ending), on the 2026-07-28 wire. */
function mcpAgrees(ending: LogLine['event'] | undefined, status: string, isError: boolean): boolean {
  if (ending === undefined) return false;
  if (ending.type === 'response') return status === 'completed' && !isError;
  const reason = (ending['details'] as { reason?: unknown } | undefined)?.reason;
  if (reason === 'cancelled' || reason === 'reset') return status === 'cancelled';
  return (status === 'completed' && isError) || status === 'failed';
}

function checkMcpTasks(recorded: Recorded, sessions: Map<string, Recorded['sessions'][number]>, report: Report): void {
  for (const task of recorded.mcpTasks) {
    if (task.status === undefined) {
      report('mcpTaskWrong', `${task.sessionId} turn ${task.turnId}: tasks/get failed (${task.error ?? 'no status'})`);
      continue;
    }
    const log = sessions.get(task.sessionId)?.log ?? [];
    const ending = log.find((l) => ENDINGS.has(l.event.type) && l.event.turnId === task.turnId)?.event;
    if (!mcpAgrees(ending, task.status, task.isError === true))
      report(
        'mcpTaskWrong',
        `${task.sessionId} turn ${task.turnId}: ${task.status}${task.isError ? ' (isError)' : ''}, log ${ending?.type ?? 'no ending'}`,
      );
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** A body's JSON with its keys sorted, so two serialisations of one payload compare equal. */
function canonical(text: string): string {
  const sort = (v: unknown): unknown =>
    Array.isArray(v)
      ? v.map(sort)
      : v !== null && typeof v === 'object'
        ? Object.fromEntries(
            Object.entries(v as Record<string, unknown>)
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([k, x]) => [k, sort(x)]),
          )
        : v;
  const parsed = parse(text);
  return parsed === undefined ? text : JSON.stringify(sort(parsed));
}

/** What a client saw under the last store identity it was told: all of it (from its first `since`) when told one. */
function lastStoreOf(view: Recorded['ws'][number]): Recorded['ws'][number] {
  const last = view.frames.at(-1)?.storeId;
  const first = view.frames[0]?.storeId;
  if (last === undefined || first === last) return view;
  return { ...view, from: 0, frames: view.frames.filter((f) => f.storeId === last) };
}
