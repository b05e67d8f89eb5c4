/**
 * Prometheus metrics at `GET /metrics` (text exposition format, no auth),
 * kept with Effect's `Metric` in a registry of the server's own and
 * rendered by `PrometheusMetrics`:
 * - `campusgate_http_requests_total{method,route,status}` and the histogram
 *   `campusgate_http_request_duration_seconds{method,route,status}`; `route`
 *   is the route template (`/api/v1/offers/{id}`, `routes.ts`, the
 *   same the log line shows), so its cardinality is bounded: a path no
 *   route matches is `unmatched`;
 * - `campusgate_validations_total{result,reason_code}`, one per validated
 *   email, bulk items included (`reason_code="none"` for valid ones);
 * - `campusgate_jobs_total{status}`, jobs ended by final status, and the
 *   gauges `campusgate_jobs_waiting` / `campusgate_jobs_running`, read from
 *   the job queue when scraped;
 * - `campusgate_config_reloads_total{result="applied|rejected"}`,
 *   `campusgate_config_incremental_changes_total` (of the applied ones,
 *   API writes applied as the one item they changed, without a full
 *   reload: applied minus these is the full reloads) and the gauge
 *   `campusgate_config_stale` (1 while a rejected change leaves an older
 *   config serving), read from the live config when scraped;
 * - `campusgate_callback_attempts_total{kind="job|verification",result="delivered|failed"}`,
 *   every delivery attempt of a job callback or verification webhook, and
 *   `campusgate_callbacks_undelivered_total{kind}`, notices given up after
 *   their last attempt (`webhooks/delivery.ts`);
 * - `campusgate_log_lines_dropped_total`, request log lines dropped because
 *   the log's output could not keep up (`observability/Log.ts`), read from
 *   the log when scraped;
 * - the process and runtime metrics and `campusgate_build_info{version}`
 *   (`runtimeMetrics.ts`).
 *
 * Recording is on the hot path, so a request series is plain numbers
 * (count, sum, buckets) the registry reads when scraped, bound once per
 * label set: the fast path binds a recorder per route (`requests`), whose
 * update is a status lookup and a few increments; other series are resolved
 * once per label set and cached.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as HttpRouter from "effect/http/HttpRouter"
import * as HttpServerResponse from "effect/http/HttpServerResponse"
import * as Layer from "effect/Layer"
import * as Metric from "effect/Metric"
import * as PrometheusMetrics from "effect/observability/PrometheusMetrics"
import type { ReloadStatus } from "../app/Snapshot.ts"
import { Snapshot } from "../app/Snapshot.ts"
import { isValidated, type Validated, type ValidationError } from "../app/Validation.ts"
import { Log } from "../observability/Log.ts"
import type { DeliveryObserver } from "../webhooks/delivery.ts"
import { METRICS_PATH } from "./routes.ts"
import { observeRuntime } from "./runtimeMetrics.ts"

/** Seconds: from half a millisecond (a single validation) to 10 s (a large bulk request). */
const DURATION_BOUNDARIES = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const REQUESTS = "campusgate_http_requests_total"
const DURATION = "campusgate_http_request_duration_seconds"
const VALIDATIONS = "campusgate_validations_total"
const RELOADS = "campusgate_config_reloads_total"
const INCREMENTAL_CHANGES = "campusgate_config_incremental_changes_total"
const STALE = "campusgate_config_stale"
const JOBS = "campusgate_jobs_total"
const JOBS_WAITING = "campusgate_jobs_waiting"
const JOBS_RUNNING = "campusgate_jobs_running"
const CALLBACK_ATTEMPTS = "campusgate_callback_attempts_total"
const CALLBACKS_UNDELIVERED = "campusgate_callbacks_undelivered_total"
const LOG_LINES_DROPPED = "campusgate_log_lines_dropped_total"

/** Who sends a signed notice: a finished job's callback, or a verification's webhook. */
export type CallbackKind = "job" | "verification"

/** Records one answered request of a bound method and route: its status and duration in milliseconds. */
export type RequestRecorder = (status: number, durationMs: number) => void

/** The requests of one method, route and status: what the registry reads, counted in plain numbers. */
class RequestSeries {
  count = 0
  sum = 0
  min = Number.MAX_VALUE
  max = -Number.MAX_VALUE
  /** Observations by the first boundary they do not exceed; the last slot is past every boundary. */
  readonly buckets = new Uint32Array(DURATION_BOUNDARIES.length + 1)

  observe(seconds: number): void {
    this.count++
    this.sum += seconds
    if (seconds < this.min) this.min = seconds
    if (seconds > this.max) this.max = seconds
    let bucket = 0
    while (bucket < DURATION_BOUNDARIES.length && seconds > DURATION_BOUNDARIES[bucket]!) bucket++
    this.buckets[bucket]!++
  }

  /** The histogram as Effect's `Metric.histogram` holds it: cumulative counts per boundary. */
  histogram(): Metric.HistogramState {
    let cumulated = 0
    const buckets = DURATION_BOUNDARIES.map((boundary, i): [number, number] => {
      cumulated += this.buckets[i]!
      return [boundary, cumulated]
    })
    return { buckets, count: this.count, min: this.min, max: this.max, sum: this.sum }
  }
}

const noUpdate = { update: () => {}, modify: () => {} }

export class Metrics extends Context.Service<
  Metrics,
  {
    /** One answered request: method, route template (`routes.ts`), status and duration in milliseconds. */
    request(method: string, route: string, status: number, durationMs: number): void
    /** A recorder of the requests of one method and route template, bound once (the fast path's, per endpoint). */
    requests(method: string, route: string): RequestRecorder
    /** One validated email. */
    validated(result: Validated): void
    /** A batch of validated emails (each counts; per-item errors, which validated nothing, do not). */
    validatedAll(results: ReadonlyArray<Validated | ValidationError>): void
    /** `times` emails validated alike (a job's batch, counted on its thread). */
    validatedTimes(result: Validated, times: number): void
    /** One job ended with this status (completed, failed, cancelled). */
    jobEnded(status: string): void
    /** Where the job gauges read from when scraped (the job queue, once it exists). */
    observeJobs(occupancy: () => { readonly waiting: number; readonly running: number }): void
    /** Counts the delivery attempts of one kind of notice (`DeliveryOptions.observe`). */
    callbacks(kind: CallbackKind): DeliveryObserver
    /** Adds the process and runtime metrics; returns what stops observing GC pauses and the event loop. */
    observeRuntime(): () => void
    /** Every metric in the Prometheus text exposition format. */
    render(): string
  }
>()("campusgate/server/Metrics") {
  /** Metrics in a registry of their own; reload figures come from `status`, dropped log lines from `droppedLines`, when rendered. */
  static readonly make = (status: () => ReloadStatus, droppedLines: () => number = () => 0): Metrics["Service"] => {
    // A fixed (empty) attribute set in the context: without one, every update gets a fresh default
    // object, and the metric recomputes its series key each time (measured: ~25 µs a request).
    const context = Context.make(Metric.MetricRegistry, new Map()).pipe(Context.add(Metric.CurrentMetricAttributes, {}))

    /** The series of a method, route and status, registered the first time it is seen. */
    const requestSeries = (method: string, route: string, status: number): RequestSeries => {
      const series = new RequestSeries()
      const attributes = { method, route, status: String(status) }
      Metric.registerUnsafe(
        Metric.counter(REQUESTS, { description: "HTTP requests answered", attributes, incremental: true }),
        context,
        { get: () => ({ count: series.count, incremental: true }), ...noUpdate }
      )
      Metric.registerUnsafe(
        Metric.histogram(DURATION, {
          description: "Time to answer an HTTP request, in seconds",
          attributes,
          boundaries: DURATION_BOUNDARIES
        }),
        context,
        { get: () => series.histogram(), ...noUpdate }
      )
      return series
    }
    const bindRequests = (method: string, route: string): RequestRecorder => {
      const byStatus = new Map<number, RequestSeries>()
      return (status, durationMs) => {
        let series = byStatus.get(status)
        if (series === undefined) {
          series = requestSeries(method, route, status)
          byStatus.set(status, series)
        }
        series.observe(durationMs / 1000)
      }
    }
    // Route, then method: nested maps, as building one string key costs more than the update.
    const recorders = new Map<string, Map<string, RequestRecorder>>()
    const requests = (method: string, route: string): RequestRecorder => {
      let byMethod = recorders.get(route)
      if (byMethod === undefined) {
        byMethod = new Map()
        recorders.set(route, byMethod)
      }
      let recorder = byMethod.get(method)
      if (recorder === undefined) {
        recorder = bindRequests(method, route)
        byMethod.set(method, recorder)
      }
      return recorder
    }

    // By result and reason code: plain counts the registry reads when scraped, registered when first seen.
    const validations = new Map<string, { count: number }>()
    const validationCounter = (result: Validated): { count: number } => {
      const key = result.isValid ? "valid" : (result.reasonCode ?? "UNKNOWN")
      let counter = validations.get(key)
      if (counter === undefined) {
        const series = { count: 0 }
        Metric.registerUnsafe(
          Metric.counter(VALIDATIONS, {
            description: "Emails validated, by result and reason code",
            attributes: { result: result.isValid ? "valid" : "invalid", reason_code: result.isValid ? "none" : key },
            incremental: true
          }),
          context,
          { get: () => ({ count: series.count, incremental: true }), ...noUpdate }
        )
        counter = series
        validations.set(key, counter)
      }
      return counter
    }

    const reloads = (result: "applied" | "rejected") =>
      Metric.registerUnsafe(
        Metric.counter(RELOADS, {
          description: "Configuration changes applied or rejected since start",
          attributes: { result },
          incremental: true
        }),
        context,
        { get: () => ({ count: status().reloads[result], incremental: true }), update: () => {}, modify: () => {} }
      )
    reloads("applied")
    reloads("rejected")
    Metric.registerUnsafe(
      Metric.counter(INCREMENTAL_CHANGES, {
        description: "Configuration changes applied as the one item an API write changed, without a full reload",
        incremental: true
      }),
      context,
      { get: () => ({ count: status().reloads.incremental, incremental: true }), update: () => {}, modify: () => {} }
    )
    Metric.registerUnsafe(
      Metric.gauge(STALE, { description: "1 while a rejected config change leaves an older config serving" }),
      context,
      { get: () => ({ value: status().stale ? 1 : 0 }), update: () => {}, modify: () => {} }
    )

    Metric.registerUnsafe(
      Metric.counter(LOG_LINES_DROPPED, {
        description: "Request log lines dropped because the log's output could not keep up",
        incremental: true
      }),
      context,
      { get: () => ({ count: droppedLines(), incremental: true }), ...noUpdate }
    )

    const jobsEnded = new Map<string, Metric.Counter<number>>()
    const jobCounter = (status: string): Metric.Counter<number> => {
      let counter = jobsEnded.get(status)
      if (counter === undefined) {
        counter = Metric.counter(JOBS, {
          description: "Asynchronous jobs ended, by final status",
          attributes: { status },
          incremental: true
        })
        jobsEnded.set(status, counter)
      }
      return counter
    }
    let occupancy = () => ({ waiting: 0, running: 0 })
    const jobGauge = (name: string, description: string, read: () => number) =>
      Metric.registerUnsafe(Metric.gauge(name, { description }), context, {
        get: () => ({ value: read() }),
        update: () => {},
        modify: () => {}
      })
    jobGauge(JOBS_WAITING, "Jobs waiting for a worker", () => occupancy().waiting)
    jobGauge(JOBS_RUNNING, "Jobs being processed", () => occupancy().running)

    const callbackCounter = (name: string, description: string, attributes: Record<string, string>) =>
      Metric.counter(name, { description, attributes, incremental: true })
    const callbackObservers = new Map<CallbackKind, DeliveryObserver>()
    const callbacks = (kind: CallbackKind): DeliveryObserver => {
      let observer = callbackObservers.get(kind)
      if (observer === undefined) {
        const attempts = "Delivery attempts of job callbacks and verification webhooks, by outcome"
        const delivered = callbackCounter(CALLBACK_ATTEMPTS, attempts, { kind, result: "delivered" })
        const failed = callbackCounter(CALLBACK_ATTEMPTS, attempts, { kind, result: "failed" })
        const undelivered = callbackCounter(
          CALLBACKS_UNDELIVERED,
          "Job callbacks and verification webhooks given up after their last attempt",
          { kind }
        )
        observer = {
          attempted: (ok) => (ok ? delivered : failed).updateUnsafe(1, context),
          gaveUp: () => undelivered.updateUnsafe(1, context)
        }
        callbackObservers.set(kind, observer)
      }
      return observer
    }

    return {
      callbacks,
      observeRuntime: () => observeRuntime(context),
      jobEnded: (status) => jobCounter(status).updateUnsafe(1, context),
      observeJobs: (read) => {
        occupancy = read
      },
      request: (method, route, status, durationMs) => requests(method, route)(status, durationMs),
      requests,
      validated: (result) => {
        validationCounter(result).count++
      },
      validatedAll: (results) => {
        for (const result of results) if (isValidated(result)) validationCounter(result).count++
      },
      validatedTimes: (result, times) => {
        validationCounter(result).count += times
      },
      render: () => PrometheusMetrics.formatUnsafe(context)
    }
  }

  /** The daemon's metrics, with the runtime's, observed while the layer lives. */
  static readonly layer: Layer.Layer<Metrics, never, Snapshot | Log> = Layer.effect(
    Metrics,
    Effect.gen(function* () {
      const config = yield* Snapshot
      const log = yield* Log
      const metrics = Metrics.make(
        () => config.status(),
        () => log.droppedLines()
      )
      yield* Effect.acquireRelease(Effect.sync(metrics.observeRuntime), (stop) => Effect.sync(stop))
      return metrics
    })
  )
}

/** `GET /metrics`, unauthenticated, as Prometheus scrapes it. */
export const MetricsRoute = HttpRouter.add(
  "GET",
  METRICS_PATH,
  Effect.map(Effect.service(Metrics), (metrics) =>
    HttpServerResponse.text(metrics.render(), { contentType: "text/plain; version=0.0.4; charset=utf-8" })
  )
)
