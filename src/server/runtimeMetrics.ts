/**
 * The process and runtime metrics of the daemon, named as Prometheus'
 * Node.js client names its default metrics, so the usual dashboards and
 * alerts work unchanged:
 * - `process_cpu_user_seconds_total`, `process_cpu_system_seconds_total`,
 *   `process_cpu_seconds_total`, `process_resident_memory_bytes`,
 *   `process_start_time_seconds`, `process_open_fds` (where `/proc` is);
 * - `nodejs_heap_size_total_bytes`, `nodejs_heap_size_used_bytes`,
 *   `nodejs_external_memory_bytes`, `nodejs_active_resources_total`;
 * - `nodejs_eventloop_lag_{min,max,mean,p50,p90,p99}_seconds`: the event
 *   loop's delay as Node samples it (10 ms resolution), over the time since
 *   the previous scrape (the figures restart at each one, as that client's
 *   do);
 * - `nodejs_gc_duration_seconds{kind}`: a histogram of garbage-collection
 *   pauses by kind (minor, major, incremental, weakcb);
 * - `nodejs_version_info{version,major,minor,patch}` and
 *   `campusgate_build_info{version}`, each 1.
 *
 * Everything but the GC pauses is read when scraped; nothing is computed
 * per request.
 */
import { readdirSync } from "node:fs"
import { constants, monitorEventLoopDelay, PerformanceObserver, performance } from "node:perf_hooks"
import type * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import { VERSION } from "../version.ts"

/** Seconds: GC pauses run from well under a millisecond (minor) to seconds (a major one on a large heap). */
const GC_BOUNDARIES = [0.001, 0.01, 0.1, 1, 2, 5]

const gcKinds: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb"
}

/** Open file descriptors, where the system lists them (Linux); undefined elsewhere. */
const openFileDescriptors = (): number | undefined => {
  try {
    return readdirSync("/proc/self/fd").length
  } catch {
    return undefined
  }
}

/**
 * Registers the metrics above in `context`'s registry and starts observing
 * GC pauses and the event loop; returns what stops observing.
 */
export const observeRuntime = (context: Context.Context<never>): (() => void) => {
  const noUpdate = { update: () => {}, modify: () => {} }
  const gauge = (name: string, description: string, read: () => number, attributes?: Record<string, string>) =>
    Metric.registerUnsafe(Metric.gauge(name, { description, ...(attributes ? { attributes } : {}) }), context, {
      get: () => ({ value: read() }),
      ...noUpdate
    })
  const counter = (name: string, description: string, read: () => number) =>
    Metric.registerUnsafe(Metric.counter(name, { description, incremental: true }), context, {
      get: () => ({ count: read(), incremental: true }),
      ...noUpdate
    })

  const seconds = (microseconds: number) => microseconds / 1e6
  counter("process_cpu_user_seconds_total", "User CPU time spent, in seconds", () => seconds(process.cpuUsage().user))
  counter("process_cpu_system_seconds_total", "System CPU time spent, in seconds", () =>
    seconds(process.cpuUsage().system)
  )
  counter("process_cpu_seconds_total", "User and system CPU time spent, in seconds", () => {
    const usage = process.cpuUsage()
    return seconds(usage.user + usage.system)
  })
  gauge("process_resident_memory_bytes", "Resident memory size, in bytes", () => process.memoryUsage.rss())
  const startedAt = Math.round(Date.now() / 1000 - process.uptime())
  gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds", () => startedAt)
  if (openFileDescriptors() !== undefined) {
    gauge("process_open_fds", "Open file descriptors", () => openFileDescriptors() ?? 0)
  }

  gauge("nodejs_heap_size_total_bytes", "V8 heap size, in bytes", () => process.memoryUsage().heapTotal)
  gauge("nodejs_heap_size_used_bytes", "V8 heap used, in bytes", () => process.memoryUsage().heapUsed)
  gauge(
    "nodejs_external_memory_bytes",
    "Memory of C++ objects bound to JavaScript objects, in bytes",
    () => process.memoryUsage().external
  )
  gauge(
    "nodejs_active_resources_total",
    "Resources keeping the event loop alive (sockets, timers, ...)",
    () => process.getActiveResourcesInfo().length
  )

  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  // One reading serves every figure of a scrape (they render one after another), then the sampling
  // restarts, so the figures cover the interval since the previous scrape.
  let lag = { min: 0, max: 0, mean: 0, p50: 0, p90: 0, p99: 0 }
  let lagReadAt = Number.NEGATIVE_INFINITY
  const currentLag = () => {
    if (performance.now() - lagReadAt < 1000) return lag
    const nanos = (value: number) => (Number.isFinite(value) ? value / 1e9 : 0)
    lag = {
      min: nanos(delay.min),
      max: nanos(delay.max),
      mean: nanos(delay.mean),
      p50: nanos(delay.percentile(50)),
      p90: nanos(delay.percentile(90)),
      p99: nanos(delay.percentile(99))
    }
    lagReadAt = performance.now()
    delay.reset()
    return lag
  }
  for (const figure of ["min", "max", "mean", "p50", "p90", "p99"] as const) {
    gauge(
      `nodejs_eventloop_lag_${figure}_seconds`,
      `Event-loop delay since the previous scrape (${figure}), in seconds`,
      () => currentLag()[figure]
    )
  }

  const pauses = new Map<string, Metric.Histogram<number>>()
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = gcKinds[(entry as { detail?: { kind?: number } }).detail?.kind ?? -1] ?? "other"
      let histogram = pauses.get(kind)
      if (histogram === undefined) {
        histogram = Metric.histogram("nodejs_gc_duration_seconds", {
          description: "Garbage-collection pauses by kind, in seconds",
          attributes: { kind },
          boundaries: GC_BOUNDARIES
        })
        pauses.set(kind, histogram)
      }
      histogram.updateUnsafe(entry.duration / 1000, context)
    }
  })
  observer.observe({ entryTypes: ["gc"] })

  const [major = "", minor = "", patch = ""] = process.versions.node.split(".")
  gauge("nodejs_version_info", "Node.js version", () => 1, { version: process.version, major, minor, patch })
  gauge("campusgate_build_info", "The version of campusgate serving", () => 1, { version: VERSION })

  return () => {
    observer.disconnect()
    delay.disable()
  }
}
