/**
 * `loadConfig` on a worker thread, so a reload never holds the event loop
 * that answers requests: parsing a large or hostile YAML file, decoding
 * and cross-checking every resource run beside it, and only the result
 * (plain data: structured-cloned) comes back. The worker's heap is capped,
 * so a file that would exhaust memory ends the worker, not the daemon: the
 * load fails with a problem, the last good config keeps serving, and the
 * next load starts a new worker. Loads run one at a time, in order.
 *
 * A worker without a load for `idleMs` stops, giving back its memory: a
 * whole engine of its own (heap, young generation, isolate) held for good
 * was ~60 MB of the daemon's resident memory (issue 16, `npm run
 * bench:jobs`), for reloads that are rare. A burst of reloads (API changes,
 * a file saved twice) still finds it running, with its decoded documents.
 *
 * `keepWarm` starts the worker at once and never stops it: for a daemon
 * whose configuration other daemons change (a shared store), where a key
 * revoked on one daemon must be refused by every daemon within a second. A
 * load that must start the worker first waits for its modules: ~170-220 ms
 * on an idle 2-core machine against ~20 ms warm (a target group created
 * through the API, the daemon's built bundle), and more than a second with
 * both cores busy, where three daemons reloading at once missed that
 * second every time (test/server/scaleOut.test.ts beside two busy loops).
 * Having loaded the shipped configuration, a running worker costs ~6-7 MB
 * of resident memory (the daemon's VmRSS with it running and after it
 * stopped); a larger configuration costs more.
 */
import { SHARE_ENV, Worker } from "node:worker_threads"
import type { ConfigLoad, ConfigLocation, DataDocuments } from "./loadConfig.ts"

/** Loads a configuration, as `loadConfig` does, off the calling thread. */
export interface ConfigLoader {
  load(location: ConfigLocation, data: DataDocuments): Promise<ConfigLoad>
  /** True while a worker is running (between a load and `idleMs` after the last one). */
  readonly running: boolean
  close(): Promise<void>
}

/** How long a worker without a load is kept, by default. */
const IDLE_MS = 2_000

/** The worker's heap cap: far above any valid configuration, far below the daemon's memory. */
const WORKER_HEAP_MB = 512

/** The worker module beside this one: `.ts` when running from source, `.js` when built. */
const workerUrl = new URL(
  import.meta.url.endsWith(".ts") ? "./loadConfigWorker.ts" : "./loadConfigWorker.js",
  import.meta.url
)

export const makeThreadConfigLoader = (
  options: { readonly idleMs?: number; readonly keepWarm?: boolean } = {}
): ConfigLoader => {
  let worker: Worker | undefined
  let queue: Promise<unknown> = Promise.resolve()
  let pending = 0
  let idle: ReturnType<typeof setTimeout> | undefined

  /** The last load is done: the worker stops unless another comes within `idleMs` (never when kept warm). */
  const idleLater = () => {
    clearTimeout(idle)
    if (options.keepWarm === true) return
    idle = setTimeout(() => {
      if (pending > 0 || worker === undefined) return
      const stopping = worker
      worker = undefined
      void stopping.terminate()
    }, options.idleMs ?? IDLE_MS)
    idle.unref()
  }

  const started = (): Worker => {
    if (worker === undefined) {
      const created = new Worker(workerUrl, {
        env: SHARE_ENV,
        resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB }
      })
      created.unref()
      created.once("exit", () => {
        if (worker === created) worker = undefined
      })
      worker = created
    }
    return worker
  }

  const loadOnce = (location: ConfigLocation, data: DataDocuments): Promise<ConfigLoad> =>
    new Promise((resolve) => {
      const thread = started()
      const failed = (message: string) => {
        thread.off("message", answered)
        resolve({ ok: false, problems: [{ path: "", message: `the configuration could not be loaded: ${message}` }] })
      }
      const onError = (error: Error) => failed(error.message)
      const onExit = (code: number) => failed(`the loader stopped (exit code ${code})`)
      const answered = (result: ConfigLoad) => {
        thread.off("error", onError)
        thread.off("exit", onExit)
        resolve(result)
      }
      thread.once("message", answered)
      thread.once("error", onError)
      thread.once("exit", onExit)
      // `env` is the worker's own (shared); a location with an explicit environment carries it.
      thread.postMessage({ location, data })
    })

  // Warm from the start: its modules load in the background while the daemon starts.
  if (options.keepWarm === true) started()

  return {
    load: (location, data) => {
      pending++
      clearTimeout(idle)
      const next = queue.then(() => loadOnce(location, data))
      queue = next
        .catch(() => undefined)
        .finally(() => {
          if (--pending === 0) idleLater()
        })
      return next
    },
    get running() {
      return worker !== undefined
    },
    close: async () => {
      await queue
      clearTimeout(idle)
      await worker?.terminate()
      worker = undefined
    }
  }
}
