/**
 * Renders the service's WebSocket frames for a person watching the demo: the reply streams inline
 * as its chunks arrive; every other event gets one line naming it.
 */

export interface Frame {
  event: string;
  data: Record<string, unknown>;
}

const useColor = process.stdout.isTTY && !process.env.NO_COLOR;
const paint = (code: number) => (text: string) => (useColor ? `\x1b[${code}m${text}\x1b[0m` : text);
export const dim = paint(2);
export const bold = paint(1);
export const cyan = paint(36);
export const green = paint(32);
export const yellow = paint(33);
export const red = paint(31);

/** One line of at most `max` characters (JSON for non-strings). */
export function short(value: unknown, max = 100): string {
  const text = (typeof value === 'string' ? value : (JSON.stringify(value) ?? '')).replace(/\s+/g, ' ').trim();
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** What a tool result holds, as text: MCP content parts joined, else the value as JSON. */
function resultText(result: unknown): string {
  const content = (result as { content?: unknown } | null)?.content;
  if (Array.isArray(content)) {
    return content
      .map((p: { type?: string; text?: string }) => (p.type === 'text' ? (p.text ?? '') : `[${p.type ?? 'part'}]`))
      .join(' ');
  }
  return typeof result === 'string' ? result : JSON.stringify(result);
}

/** Prints the frames of one turn as they arrive; `write` is stdout by default. */
export function createTurnPrinter(write: (text: string) => void = (t) => void process.stdout.write(t)) {
  let streaming = false;
  let chunks = 0;
  const line = (text: string) => {
    if (streaming) write('\n');
    streaming = false;
    write(`${text}\n`);
  };
  return {
    /** Handles one frame; true when it ends the turn (response or error). */
    frame(f: Frame): boolean {
      const d = f.data;
      switch (f.event) {
        case 'userMessage':
          line(dim(`  [userMessage] stored as seq ${String(d.seq)}`));
          return false;
        case 'thinking':
          line(dim('  [thinking] the agent is calling the model…'));
          return false;
        case 'chunk':
          if (!streaming) write(`${bold(green('agent ›'))} `);
          streaming = true;
          chunks++;
          write(String(d.content));
          return false;
        case 'toolCall':
          line(
            yellow(
              `  [toolCall]   ${String(d.toolName)} on ${String(d.serverId)} ${short(d.args, 80)}  (callId ${String(d.callId)})`,
            ),
          );
          return false;
        case 'toolResult': {
          const ok = d.success === true ? green('ok') : red('failed');
          line(
            yellow(`  [toolResult] ${String(d.toolName)} ${ok} in ${String(d.durationMs)} ms: `) +
              short(resultText(d.result), 90),
          );
          return false;
        }
        case 'response': {
          const usage = d.usage as { totalTokens?: number } | undefined;
          const tokens = usage?.totalTokens !== undefined ? `, ${usage.totalTokens} tokens` : '';
          line(
            dim(
              `  [response] ${chunks} chunks streamed, joined = the reply (${String(d.content).length} chars, seq ${String(d.seq)}${tokens})`,
            ),
          );
          chunks = 0;
          return true;
        }
        case 'contextCompacted': {
          const how =
            d.method === 'summary'
              ? `summarised seq ≤ ${String(d.upToSeq)}`
              : `cleared old tool results (seq ≤ ${String(d.upToSeq)})`;
          line(
            cyan(
              `  [contextCompacted] ${how}: ~${String(d.tokensBefore)} → ~${String(d.tokensAfter)} tokens (trigger: ${String(d.trigger)})`,
            ),
          );
          if (typeof d.summary === 'string') line(dim(`      summary: ${short(d.summary, 110)}`));
          return false;
        }
        case 'error':
          line(red(`  [error] ${String(d.code)}: ${String(d.message)}`));
          chunks = 0;
          return true;
        default:
          line(dim(`  [${f.event}] ${short(d)}`));
          return false;
      }
    },
  };
}
