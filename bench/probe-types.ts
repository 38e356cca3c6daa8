/** What the bench probe (bench/probe.js) answers when bench/lib/procs.ts asks. */
export type ProbeReply = { id: number } & (
  | { us: number }
  | { path: string }
  | { gc: boolean; memory: NodeJS.MemoryUsage; listeners: Record<string, number>; handles: Record<string, number> }
);
