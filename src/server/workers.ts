/**
 * `campusgate serve --workers N`: N daemon processes on one port, so one
 * host uses every core. The primary process (`node:cluster`) only forks
 * the workers, hands them connections (the cluster module's round-robin)
 * and starts a new one when one dies; each worker is a whole daemon. They
 * share rate limits, jobs, statistics, keys and resources through Redis or
 * PostgreSQL, which is why more than one worker needs `store.kind: redis`
 * or `postgres`: with the file store each would count and queue on its own.
 */
import cluster, { type Worker } from "node:cluster"
import { availableParallelism } from "node:os"
import * as Effect from "effect/Effect"
import type * as Scope from "effect/Scope"

/** `N` or `auto` (the cores this process may use) as a number of workers; undefined when it is neither. */
export const workerCount = (flag: string): number | undefined => {
  if (flag === "auto") return availableParallelism()
  return /^[1-9]\d{0,3}$/.test(flag) ? Number(flag) : undefined
}

/** Why the file store cannot run several workers, and what to configure instead. */
export const FILE_STORE_REFUSAL =
  "--workers above 1 needs state the workers share: with the file store each worker would keep its own " +
  "rate limits, job queue and statistics. Set store.kind: redis (or postgres) and store.url in campusgate.yaml " +
  "(or CAMPUSGATE_REDIS_URL, CAMPUSGATE_DATABASE_URL), or run one worker."

/** Whether this process is a worker forked by `runWorkers` (it then serves as one daemon). */
export const isWorker = (): boolean => cluster.isWorker

/** How long a worker that died is waited for before another is started, so a crash loop does not spin. */
const RESTART_DELAY_MS = 1000

/** A worker that stops this soon after it was started failed to start. */
const EARLY_EXIT_MS = 10_000

/**
 * Forks `count` workers running this same command line and keeps that many
 * running until the scope closes; then asks each to stop (SIGTERM: they
 * drain their requests) and waits for them. Fails when workers keep
 * stopping right after they start (a configuration or Redis they cannot
 * start on), instead of starting new ones for ever.
 */
export const runWorkers = (
  count: number,
  log: (message: string, fields: Record<string, unknown>) => void
): Effect.Effect<never, Error, Scope.Scope> =>
  Effect.flatMap(
    Effect.acquireRelease(
      Effect.sync(() => {
        let stopping = false
        let earlyExits = 0
        let failed: ((error: Error) => void) | undefined
        const failure = new Promise<Error>((resolve) => {
          failed = resolve
        })
        const fork = (): Worker => {
          const startedAt = Date.now()
          const worker = cluster.fork()
          worker.once("listening", () => {
            earlyExits = 0
          })
          worker.once("exit", (code, signal) => {
            if (stopping) return
            if (Date.now() - startedAt < EARLY_EXIT_MS && ++earlyExits >= 2 * count) {
              failed?.(new Error("the workers stop as soon as they start; see their messages above"))
              return
            }
            log("a worker stopped; starting another", { pid: worker.process.pid, code, signal })
            setTimeout(() => {
              if (!stopping) fork()
            }, RESTART_DELAY_MS).unref()
          })
          return worker
        }
        for (let i = 0; i < count; i++) fork()
        log("workers started", { workers: count, pid: process.pid })
        return {
          failure,
          stop: () => {
            stopping = true
          }
        }
      }),
      (running) =>
        Effect.promise(async () => {
          running.stop()
          const workers = Object.values(cluster.workers ?? {}).filter((worker) => worker !== undefined)
          await Promise.all(
            workers.map(
              (worker) =>
                new Promise<void>((resolve) => {
                  if (worker.isDead()) return resolve()
                  worker.once("exit", () => resolve())
                  worker.process.kill("SIGTERM")
                })
            )
          )
        })
    ),
    (running) =>
      Effect.flatMap(
        Effect.promise(() => running.failure),
        Effect.fail
      )
  )
