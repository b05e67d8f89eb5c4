/**
 * The one live snapshot of the configuration: the loaded config, the engine
 * compiled from it and the index of its API keys, replaced as a whole. Every
 * transport (library, HTTP, CLI, jobs) reads it here and nowhere else.
 *
 * A snapshot comes from a source: a config directory (the daemon, the
 * library over the same files) or resources given in memory (the library).
 * A change is loaded, checked and compiled off to the side; a valid one
 * replaces the snapshot in one assignment, so a validation already running
 * finishes on the snapshot it started with, and an invalid one leaves the
 * last good snapshot serving and is reported (`onReload`, `status()` for
 * readiness and metrics). With `watch`, a directory source reloads when its
 * files change.
 */

import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as Semaphore from "effect/Semaphore"
import type { ConfigLoad, LoadedConfig } from "../config/loadConfig.ts"
import { watchConfigDirectories } from "../config/watchConfig.ts"
import { type ConfigurationProblem, InvalidConfiguration } from "../domain/errors.ts"
import type { Engine } from "../engine/Engine.ts"
import { toConfigurationError } from "../engine/InstitutionIndex.ts"
import { ApiKeyIndex } from "../keys/apiKeys.ts"
import { EngineBuilder } from "./EngineBuilder.ts"
import type { SnapshotSource } from "./sources.ts"

export interface ConfigSnapshot {
  readonly config: LoadedConfig
  readonly engine: Engine
  /** The API keys of this config, indexed for constant-time checks. */
  readonly keys: ApiKeyIndex
  /** 1 for the first load, +1 for each change applied. */
  readonly generation: number
  /** Whether the engine holds the built-in institution data too (another thread builds the same engine from the config). */
  readonly builtInInstitutions: boolean
  readonly loadedAt: string
}

export type ReloadOutcome =
  | { readonly ok: true; readonly generation: number }
  | { readonly ok: false; readonly problems: ReadonlyArray<ConfigurationProblem> }

export interface ReloadStatus {
  readonly generation: number
  readonly loadedAt: string
  /** The last reload attempt failed: an older config is serving. */
  readonly stale: boolean
  /** The problems of the last failed attempt (empty when the last attempt succeeded). */
  readonly problems: ReadonlyArray<ConfigurationProblem>
  readonly lastAttemptAt: string
  readonly reloads: { readonly applied: number; readonly rejected: number }
}

export interface LiveSnapshotOptions {
  /** Watch the source's directories and reload on change (default false: call `reload()`). */
  readonly watch?: boolean | undefined
  /** Quiet time after the last change before reloading (default 150 ms): an editor's save is several events. */
  readonly debounceMs?: number | undefined
  /** Told about every reload attempt after the first load. */
  readonly onReload?: ((outcome: ReloadOutcome) => void) | undefined
  /** The clock for offer windows (default `Date.now`). */
  readonly now?: (() => number) | undefined
  /** Set to false to use only the config's datasets, not the built-in institution data (default true). */
  readonly builtInInstitutions?: boolean | undefined
  /**
   * The configuration version of a store other daemons write too (Redis,
   * PostgreSQL): after a lookup missed, a snapshot behind it catches up
   * (`catchUp`). Absent: the snapshot is the only writer's (files).
   */
  readonly sharedVersion?: Effect.Effect<string | undefined, unknown> | undefined
}

/** The holder of the snapshot in force. */
export class LiveSnapshot {
  readonly #source: SnapshotSource
  readonly #engines: EngineBuilder
  readonly #builtInInstitutions: boolean
  readonly #onReload: ((outcome: ReloadOutcome) => void) | undefined
  readonly #sharedVersion: Effect.Effect<string | undefined, unknown> | undefined
  /** The shared store's version the last catch-up read, and its reload (misses while it runs wait for it). */
  #catchingUp: { readonly version: string; readonly reload: Fiber.Fiber<ReloadOutcome> } | undefined
  #snapshot: ConfigSnapshot
  #status: ReloadStatus
  #unwatch: (() => void) | undefined
  /** Resolves once changes are being watched (at once without `watch`): a change made before may be missed. */
  watching: Promise<void> = Promise.resolve()
  readonly #reloading = Semaphore.makeUnsafe(1)

  private constructor(
    source: SnapshotSource,
    engines: EngineBuilder,
    first: ConfigSnapshot,
    options: LiveSnapshotOptions
  ) {
    this.#source = source
    this.#engines = engines
    this.#builtInInstitutions = first.builtInInstitutions
    this.#snapshot = first
    this.#onReload = options.onReload
    this.#sharedVersion = options.sharedVersion
    this.#status = {
      generation: 1,
      loadedAt: first.loadedAt,
      stale: false,
      problems: [],
      lastAttemptAt: first.loadedAt,
      reloads: { applied: 0, rejected: 0 }
    }
  }

  /**
   * Loads the configuration from `source`; it must be valid to start.
   *
   * Start-up runs three slow steps side by side: the load (on the loader's
   * thread for the daemon), the watcher's first scan and the reading of the
   * built-in email lists (`EngineBuilder.prepare`); the compile waits for
   * them, and the watcher's settling (two poll intervals) runs during it.
   * A change the watcher reports before the snapshot exists is reloaded
   * once it does. Measured as `serve` until `/healthz` answers
   * (`bench/serveStart.ts`): 0.83x the time of loading, compiling, then
   * watching.
   */
  static make(
    source: SnapshotSource,
    options: LiveSnapshotOptions = {}
  ): Effect.Effect<LiveSnapshot, InvalidConfiguration> {
    return LiveSnapshot.#make(source, options, true)
  }

  /**
   * `make`; with `awaitScan`, the compile also waits for the watcher's first
   * scan, so that the settling that follows it (`ConfigWatcher.ready`) runs
   * during the compile rather than after (the scan needs this thread, which
   * the compile holds). Only an asynchronous start can wait.
   */
  static #make(
    source: SnapshotSource,
    options: LiveSnapshotOptions,
    awaitScan: boolean
  ): Effect.Effect<LiveSnapshot, InvalidConfiguration> {
    // Made when run, not when described: each run watches and builds afresh.
    return Effect.suspend(() => LiveSnapshot.#start(source, options, awaitScan))
  }

  static #start(
    source: SnapshotSource,
    options: LiveSnapshotOptions,
    awaitScan: boolean
  ): Effect.Effect<LiveSnapshot, InvalidConfiguration> {
    const engines = new EngineBuilder({ now: options.now, builtInInstitutions: options.builtInInstitutions })
    let live: LiveSnapshot | undefined
    let changedEarly = false
    const watcher =
      options.watch === true
        ? watchConfigDirectories(source.directories, options.debounceMs ?? 150, () => {
            if (live === undefined) changedEarly = true
            else Effect.runFork(live.reload())
          })
        : undefined
    const scanned = watcher !== undefined && awaitScan ? Effect.promise(() => watcher.scanned) : Effect.void
    const loading = Effect.all([source.load, Effect.sync(() => engines.prepare()), scanned], { concurrency: 3 })
    return loading.pipe(
      Effect.flatMap(([loaded]) => {
        const first = compile(loaded, engines, 1, options.builtInInstitutions ?? true)
        if (!("engine" in first)) return Effect.fail(new InvalidConfiguration({ problems: first.problems }))
        const made = new LiveSnapshot(source, engines, first, options)
        if (watcher !== undefined) {
          made.#unwatch = () => watcher.close()
          made.watching = watcher.ready
        }
        live = made
        if (changedEarly) Effect.runFork(made.reload())
        return Effect.succeed(made)
      }),
      Effect.onExit((exit) => Effect.sync(() => (Exit.isSuccess(exit) ? undefined : watcher?.close())))
    )
  }

  /**
   * `make`, run now: for sources whose stores answer synchronously (files,
   * memory), as the library's synchronous entry and the tools need.
   */
  static loadSync(source: SnapshotSource, options: LiveSnapshotOptions = {}): LiveSnapshot | InvalidConfiguration {
    const exit = Effect.runSyncExit(LiveSnapshot.#make(source, options, false))
    if (Exit.isSuccess(exit)) return exit.value
    const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
    if (failure !== undefined) return failure.error
    throw Cause.squash(exit.cause)
  }

  /** The snapshot in force: read it once per request and use that. */
  current(): ConfigSnapshot {
    return this.#snapshot
  }

  status(): ReloadStatus {
    return this.#status
  }

  /**
   * After a lookup missed: when the shared store's configuration version
   * moved since the last catch-up, reloads now — so a resource or key
   * another daemon has just written serves here before its announcement
   * arrives — and misses meanwhile wait for that reload. A version that did
   * not move costs one read of it and no reload, so a flood of misses does
   * not reload the configuration. Nothing with the file store.
   */
  catchUp(): Effect.Effect<void> {
    const read = this.#sharedVersion
    if (read === undefined) return Effect.void
    return Effect.flatMap(
      Effect.orElseSucceed(read, () => undefined),
      (version) => {
        if (version === undefined) return Effect.void
        if (this.#catchingUp?.version !== version) this.#catchingUp = { version, reload: Effect.runFork(this.reload()) }
        return Effect.asVoid(Fiber.await(this.#catchingUp.reload))
      }
    )
  }

  /** Reads the source again now; applies the result only if it is valid. Reloads run one at a time. */
  reload(): Effect.Effect<ReloadOutcome> {
    return this.#reloading.withPermit(Effect.map(this.#source.load, (loaded) => this.apply(loaded)))
  }

  /**
   * Applies a configuration loaded elsewhere (the library's `reload(resources)`)
   * if it is valid; otherwise the snapshot in force stays and the attempt is reported.
   */
  apply(loaded: ConfigLoad): ReloadOutcome {
    const attemptedAt = new Date().toISOString()
    const next = compile(loaded, this.#engines, this.#snapshot.generation + 1, this.#builtInInstitutions)
    const { applied, rejected } = this.#status.reloads
    let outcome: ReloadOutcome
    if ("engine" in next) {
      this.#snapshot = next
      this.#status = {
        generation: next.generation,
        loadedAt: next.loadedAt,
        stale: false,
        problems: [],
        lastAttemptAt: attemptedAt,
        reloads: { applied: applied + 1, rejected }
      }
      outcome = { ok: true, generation: next.generation }
    } else {
      this.#status = {
        ...this.#status,
        stale: true,
        problems: next.problems,
        lastAttemptAt: attemptedAt,
        reloads: { applied, rejected: rejected + 1 }
      }
      outcome = { ok: false, problems: next.problems }
    }
    this.#onReload?.(outcome)
    return outcome
  }

  /** Stops watching. */
  close(): void {
    this.#unwatch?.()
    this.#unwatch = undefined
  }
}

const compile = (
  loaded: ConfigLoad,
  engines: EngineBuilder,
  generation: number,
  builtInInstitutions: boolean
): ConfigSnapshot | { readonly problems: ReadonlyArray<ConfigurationProblem> } => {
  if (!loaded.ok) return { problems: loaded.problems }
  let engine: Engine | InvalidConfiguration
  try {
    engine = engines.engineFor(loaded.config)
  } catch (error) {
    return { problems: toConfigurationError(error).problems }
  }
  if (engine instanceof InvalidConfiguration) return { problems: engine.problems }
  return {
    config: loaded.config,
    engine,
    keys: new ApiKeyIndex(loaded.config.apiKeys),
    generation,
    builtInInstitutions,
    loadedAt: new Date().toISOString()
  }
}

/** The live snapshot as a service: what the HTTP server, the jobs and the application services read. */
export class Snapshot extends Context.Service<
  Snapshot,
  {
    /** The snapshot in force: read it once per request. */
    current(): ConfigSnapshot
    status(): ReloadStatus
    /**
     * Loads the source again now and applies the result only if it is
     * valid: an API write calls it so the change serves before the answer.
     */
    reload(): Effect.Effect<ReloadOutcome>
    /** After a lookup missed: catches up with a shared store other daemons wrote to (`LiveSnapshot.catchUp`). */
    catchUp(): Effect.Effect<void>
  }
>()("campusgate/app/Snapshot") {
  /** The service over a holder. */
  static readonly over = (live: LiveSnapshot): Snapshot["Service"] =>
    Snapshot.of({
      current: () => live.current(),
      status: () => live.status(),
      reload: () => live.reload(),
      catchUp: () => live.catchUp()
    })

  /** A holder made elsewhere (the daemon, the library facade); its owner closes it. */
  static readonly layer = (live: LiveSnapshot): Layer.Layer<Snapshot> => Layer.succeed(Snapshot, Snapshot.over(live))

  /** Loads `source` (failing with every problem) and, with `watch`, stops watching when the layer is released. */
  static readonly layerFrom = (
    source: SnapshotSource,
    options: LiveSnapshotOptions = {}
  ): Layer.Layer<Snapshot, InvalidConfiguration> =>
    Layer.unwrap(
      Effect.map(
        Effect.acquireRelease(
          Effect.tap(LiveSnapshot.make(source, options), (live) => Effect.promise(() => live.watching)),
          (live) => Effect.sync(() => live.close())
        ),
        Snapshot.layer
      )
    )
}
