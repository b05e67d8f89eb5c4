import * as Context from "effect/Context"
import * as Metric from "effect/Metric"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import { describe, expect, it } from "vitest"
import type { ReloadStatus } from "../../src/app/Snapshot.ts"
import { Metrics } from "../../src/server/metrics.ts"

const status = (): ReloadStatus => ({
  generation: 1,
  loadedAt: new Date(0).toISOString(),
  stale: false,
  problems: [],
  lastAttemptAt: new Date(0).toISOString(),
  reloads: { applied: 0, rejected: 0, incremental: 0 }
})

/** The lines of `text` about `name` (its samples, and its help and type lines). */
const linesOf = (text: string, name: string) => text.split("\n").filter((line) => line.includes(name))

describe("the request series", () => {
  it("render as Effect's own counter and histogram would, for the same requests", () => {
    const metrics = Metrics.make(status)
    const durationsMs = [0.2, 0.5, 0.7, 3, 3, 40, 900, 20_000]
    const bound = metrics.requests("POST", "/api/v1/validate/target-group")
    for (const ms of durationsMs) bound(200, ms)
    metrics.request("POST", "/api/v1/validate/target-group", 429, 1.5)
    metrics.request("GET", "/healthz", 200, 0.1)

    // The reference: Effect's metrics updated one by one, in a registry of their own.
    const context = Context.make(Metric.MetricRegistry, new Map()).pipe(Context.add(Metric.CurrentMetricAttributes, {}))
    const reference = (method: string, route: string, status: number, ms: number) => {
      const attributes = { method, route, status: String(status) }
      Metric.counter("campusgate_http_requests_total", {
        description: "HTTP requests answered",
        attributes,
        incremental: true
      }).updateUnsafe(1, context)
      Metric.histogram("campusgate_http_request_duration_seconds", {
        description: "Time to answer an HTTP request, in seconds",
        attributes,
        boundaries: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
      }).updateUnsafe(ms / 1000, context)
    }
    for (const ms of durationsMs) reference("POST", "/api/v1/validate/target-group", 200, ms)
    reference("POST", "/api/v1/validate/target-group", 429, 1.5)
    reference("GET", "/healthz", 200, 0.1)

    const rendered = metrics.render()
    const expected = PrometheusMetrics.formatUnsafe(context)
    for (const name of ["campusgate_http_requests_total", "campusgate_http_request_duration_seconds"]) {
      expect(linesOf(rendered, name).sort()).toEqual(linesOf(expected, name).sort())
    }
    expect(rendered).toContain(
      'campusgate_http_request_duration_seconds_bucket{method="POST",route="/api/v1/validate/target-group",status="200",le="0.001"} 3'
    )
  })

  it("count the request log lines the log dropped, read when scraped", () => {
    let dropped = 0
    const metrics = Metrics.make(status, () => dropped)
    expect(metrics.render()).toContain("campusgate_log_lines_dropped_total 0")
    dropped = 42
    expect(metrics.render()).toContain("campusgate_log_lines_dropped_total 42")
  })
})
