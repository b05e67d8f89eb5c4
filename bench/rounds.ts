/**
 * Timing in alternating rounds, shared by the library benchmarks: each
 * compared loop runs once per round, so a disturbed stretch of the shared
 * machine hits all of them; a figure is reported as the median over the
 * rounds with its spread (min, max), and a ratio is taken within each round
 * (both sides measured moments apart) before its median is taken.
 */

export interface Spread {
  readonly median: number
  readonly min: number
  readonly max: number
}

const round = (value: number, digits: number): number => {
  const scale = 10 ** digits
  return Math.round(value * scale) / scale
}

/** Median, min and max of `values`, rounded to `digits` decimals. */
export const spread = (values: ReadonlyArray<number>, digits = 2): Spread => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length >> 1
  const median = sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2
  return { median: round(median, digits), min: round(sorted[0]!, digits), max: round(sorted.at(-1)!, digits) }
}

/** `a[i] / b[i]` for each round. */
export const ratios = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): Array<number> => a.map((x, i) => x / b[i]!)

/**
 * Runs `run` once and returns the milliseconds it took, wall-clock and CPU
 * (user + system of the whole process: time it was descheduled on the shared
 * machine does not count, its GC threads do), and what it returned (a
 * checksum, which also keeps the work from being optimised away).
 */
export const timed = (
  run: () => number
): { readonly wallMs: number; readonly cpuMs: number; readonly checksum: number } => {
  const cpu = process.cpuUsage()
  const wall = performance.now()
  const checksum = run()
  const wallMs = performance.now() - wall
  const used = process.cpuUsage(cpu)
  return { wallMs, cpuMs: (used.user + used.system) / 1000, checksum }
}

/** Whether the benchmark runs in its short mode (`--quick`, or BENCH_QUICK=1): a check that it works, not a measurement. */
export const quick = process.argv.includes("--quick") || process.env.BENCH_QUICK === "1"
