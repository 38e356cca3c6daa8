/**
 * REST control plane under closed-loop load on keep-alive connections: health, tool listing, and
 * tool execution against a stdio MCP server (the echo fixture).
 */
import { execFileSync } from 'node:child_process';
import { cores, ms, perSec, type Bench } from '../lib/bench.ts';
import { httpLoad, rawRequest, type HttpLoadResult } from '../lib/http-load.ts';
import { cpuWindow, sampleProc, startService } from '../lib/procs.ts';
import { round } from '../lib/stats.ts';

interface Case {
  id: string;
  label: string;
  connections: number;
  request: Buffer;
}

export const restBench: Bench = {
  name: 'rest',
  title: 'REST control plane',
  quick: true,
  async run({ mode, sim, log }) {
    const svc = await startService({ modelUrl: sim.url, agent: 'bench-tools.yml' });
    try {
      const cases: Case[] = [
        { id: 'health', label: 'GET /api/health', connections: 100, request: rawRequest('GET', '/api/health') },
        {
          id: 'tools',
          label: 'GET /api/mcp/servers/echo/tools',
          connections: 100,
          request: rawRequest('GET', '/api/mcp/servers/echo/tools'),
        },
        {
          id: 'execute',
          label: 'POST …/tools/echo/execute (stdio)',
          connections: 20,
          request: rawRequest('POST', '/api/mcp/servers/echo/tools/echo/execute', '{"message":"hi"}'),
        },
      ];
      const durationMs = mode === 'full' ? 6000 : 3000;
      const rows: [string, string][] = [];
      const metrics: Record<string, unknown> = {};
      const results: Record<string, HttpLoadResult & { cpu: Record<string, number>; agentdKernelShare: number }> = {};
      // The MCP server's child process: its CPU counts for tool execution.
      let mcpPid: number | undefined;
      try {
        mcpPid =
          Number(
            execFileSync('pgrep', ['-P', String(svc.pid)], { encoding: 'utf8' })
              .trim()
              .split('\n')[0],
          ) || undefined;
      } catch {
        /* no child found: its CPU is not reported */
      }
      for (const c of cases) {
        log(`  ${c.label}, ${c.connections} connections`);
        await httpLoad({ port: svc.port, connections: c.connections, durationMs: 500, request: () => c.request });
        const pids: Record<string, number> = { agentd: svc.pid };
        if (mcpPid && c.id === 'execute') pids.mcpServer = mcpPid;
        const cpu = cpuWindow(pids);
        const r = await httpLoad({
          port: svc.port,
          connections: c.connections,
          durationMs,
          request: () => c.request,
          timeoutMs: 10_000,
        });
        const { wallMs, cpuMs, sysMs } = cpu();
        const shares = Object.fromEntries(Object.entries(cpuMs).map(([k, v]) => [k, round(v / wallMs, 2)]));
        results[c.id] = {
          ...r,
          cpu: shares,
          agentdKernelShare: round((sysMs.agentd ?? 0) / Math.max(1, cpuMs.agentd ?? 0), 2),
        };
        const bad = r.errors + Object.values(r.statuses).reduce((a, b) => a + b, 0);
        rows.push(
          [
            `${c.label} — ${c.connections} connections`,
            `${perSec(r.rps)}, p50 ${ms(r.latency.p50)}, p99 ${ms(r.latency.p99)}${bad ? `, ${bad} failed` : ''}`,
          ],
          [
            '  CPU: agentd / load generator' + (pids.mcpServer ? ' / MCP server' : '') + ' / other jobs',
            [
              cores(shares.agentd),
              cores(shares.loadgen),
              ...(pids.mcpServer ? [cores(shares.mcpServer)] : []),
              cores(shares.other),
            ].join(' / '),
          ],
        );
      }
      metrics.results = results;
      metrics.rssMb = round(sampleProc(svc.pid).rssKb / 1024, 1);
      const health = results.health!;
      return {
        name: 'rest',
        title: 'REST control plane',
        load: `closed loop on keep-alive connections (a raw-socket client: one request in flight per connection), ${durationMs / 1000} s per endpoint after 0.5 s warm-up; rate limits raised in bench/agents/bench-tools.yml.`,
        rows,
        metrics,
        goals: [
          {
            id: 'health-rps',
            label: 'REST health req/s at 100 connections',
            target: 80_000,
            unit: 'req/s',
            better: 'higher',
            value: health.rps,
            note: `the service's one event loop is saturated (${cores(health.cpu.agentd)}) at ${round(((health.cpu.agentd ?? 0) * 1e6) / Math.max(1, health.rps), 1)} µs of CPU per request (${Math.round(health.agentdKernelShare * 100)}% of it kernel time for the loopback socket calls; the JS part is the REST pipeline: header copy, AbortController and URLSearchParams per request, rate limiter, a bus command for mcp.listServers, JSON), while the load generator needs ${cores(health.cpu.loadgen)} of the second core.`,
          },
        ],
        notes: ['The load generator runs in the bench process on the same 2 cores; its share is in the CPU rows.'],
      };
    } finally {
      await svc.stop();
    }
  },
};
