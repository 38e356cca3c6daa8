/** The scheduler's metrics (registered on the app's registry by src/metrics). */
export interface ScheduleMetrics {
  fires: { inc(): void };
  skips: { inc(): void };
  failures: { inc(): void };
  /** Seconds from a tick to its message sent. */
  lag: { observe(seconds: number): void };
}
