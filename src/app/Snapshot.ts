/**
 * The one live snapshot of the configuration: the loaded config, the engine
 * compiled from it and the index of its API keys, replaced as a whole. Every
 * transport (library, HTTP, CLI, jobs) reads it here and nowhere else.
 *
 * How a change applies is decided here, in one place (issue 48): an API
 * write of one target group, offer or key — this daemon's (`change`) or
 * another's, learnt from the shared store's change feed (`follow`) — is
 * read from its store and applied as that one item (`config/itemChanges.ts`):
 * nothing else is loaded, decoded or compiled again. Whatever that cannot
 * tell — a file changed, a gap in the feed, a change that is no one item,
 * one a rule might refuse, a snapshot left stale by a rejected change — is
 * a full reload, which refuses with the loader's own words. The watcher's
 * report of the files the daemon's own write changed reloads nothing when
 * they hold what the snapshot serves.
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
import { applyItems, filesServed, type ItemRef } from "../config/itemChanges.ts"
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
  | {
      readonly ok: true
      readonly generation: number
      /** How it applied: the items changed alone, or the whole configuration loaded again. */
      readonly change: "incremental" | "reload"
      /** The items an incremental change applied. */
      readonly items?: ReadonlyArray<ItemRef> | undefined
    }
  | { readonly ok: false; readonly problems: ReadonlyArray<ConfigurationProblem> }

/**
 * A shared store's change feed (Redis, PostgreSQL): its configuration
 * version, and which items the writes after a version changed.
 */
export interface ConfigFeed {
  /** The version now (undefined before the first change). */
  readonly version: Effect.Effect<string | undefined, unknown>
  /**
   * The version now and the items changed after `since`, in order;
   * `items` undefined when the feed no longer holds every change since
   * then (trimmed), or one of them was no one item.
   */
  changesSince(
    since: string
  ): Effect.Effect<
    { readonly version: string | undefined; readonly items: ReadonlyArray<ItemRef> | undefined },
    unknown
  >
}

export interface ReloadStatus {
  readonly generation: number
  readonly loadedAt: string
  /** The last reload attempt failed: an older config is serving. */
  readonly stale: boolean
  /** The problems of the last failed attempt (empty when the last attempt succeeded). */
  readonly problems: ReadonlyArray<ConfigurationProblem>
  readonly lastAttemptAt: string
  /**
   * Changes applied and rejected; `incremental`: of those applied, the ones
   * applied as the items they changed, without a full reload.
   */
  readonly reloads: { readonly applied: number; readonly rejected: number; readonly incremental: number }
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
   * The change feed of a store other daemons write too (Redis, PostgreSQL):
   * `follow` applies what it names, and after a lookup missed a snapshot
   * behind it catches up (`catchUp`). Absent: the snapshot is the only
   * writer's (files).
   */
  readonly feed?: ConfigFeed | undefined
}

/** The holder of the snapshot in force. */
export class LiveSnapshot {
  readonly #source: SnapshotSource
  readonly #engines: EngineBuilder
  readonly #builtInInstitutions: boolean
  readonly #onReload: ((outcome: ReloadOutcome) => void) | undefined
  readonly #feed: ConfigFeed | undefined
  /** The feed's version the snapshot holds every change up to (undefined: unknown, the next change reloads). */
  #followed: string | undefined
  /** The shared store's version the last catch-up read, and its following (misses while it runs wait for it). */
  #catchingUp: { readonly version: string; readonly follow: Fiber.Fiber<ReloadOutcome | undefined> } | undefined
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
    options: LiveSnapshotOptions,
    followed: string | undefined
  ) {
    this.#source = source
    this.#engines = engines
    this.#builtInInstitutions = first.builtInInstitutions
    this.#snapshot = first
    this.#onReload = options.onReload
    this.#feed = options.feed
    this.#followed = followed
    this.#status = {
      generation: 1,
      loadedAt: first.loadedAt,
      stale: false,
      problems: [],
      lastAttemptAt: first.loadedAt,
      reloads: { applied: 0, rejected: 0, incremental: 0 }
    }
  }

  /**
   * Loads the configuration from `source`; it must be valid to start.
   *
   * Start-up runs three slow steps side by side: the load (on the loader's
   * thread for the daemon), the watcher's first scan and the reading of the
   * built-in email lists (`EngineBuilder.prepare`); the compile waits for
   * them, and the watcher's settling (each watched path's first stat, on
   * libuv's thread pool: `ConfigWatcher.ready`) runs during it.
   * A change the watcher reports before the snapshot exists is reloaded
   * once it does; one it cannot report, made after the load read the file
   * but before the watcher's baseline of it, is found by its modification
   * time (`ConfigWatcher.changedSince`, from when the load began) and
   * compared with what was loaded. Measured as `serve` until `/healthz` answers
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
        ? watchConfigDirectories(source.directories, options.debounceMs ?? 150, (paths) => {
            if (live === undefined) changedEarly = true
            else Effect.runFork(live.#filesChanged(paths))
          })
        : undefined
    const scanned = watcher !== undefined && awaitScan ? Effect.promise(() => watcher.scanned) : Effect.void
    // The feed's version read before the load: the load holds every change up to it.
    let loadStartedAt = 0
    const versioned = Effect.flatMap(feedVersion(options.feed), (version) =>
      Effect.map(
        Effect.andThen(
          Effect.sync(() => {
            loadStartedAt = Date.now()
          }),
          source.load
        ),
        (loaded) => [loaded, version] as const
      )
    )
    const loading = Effect.all([versioned, Effect.sync(() => engines.prepare()), scanned], { concurrency: 3 })
    return loading.pipe(
      Effect.flatMap(([[loaded, version]]) => {
        const first = compile(loaded, engines, 1, options.builtInInstitutions ?? true)
        if (!("engine" in first)) return Effect.fail(new InvalidConfiguration({ problems: first.problems }))
        const made = new LiveSnapshot(source, engines, first, options, version)
        if (watcher !== undefined) {
          made.#unwatch = () => watcher.close()
          // A file changed after the load read it but before its baseline: the watcher cannot see it, so it is
          // compared with what was loaded here (nothing happens when it holds what the snapshot serves).
          made.watching = watcher.ready.then(async () => {
            const paths = await watcher.changedSince(loadStartedAt)
            if (paths.length > 0) Effect.runFork(made.#filesChanged(paths))
          })
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
   * moved past what the snapshot holds, follows the feed now — so a
   * resource or key another daemon has just written serves here before its
   * announcement arrives — and misses meanwhile wait for that. A version
   * that did not move costs one read of it and nothing else, so a flood of
   * misses changes nothing. Nothing with the file store.
   */
  catchUp(): Effect.Effect<void> {
    const feed = this.#feed
    if (feed === undefined) return Effect.void
    return Effect.flatMap(
      Effect.orElseSucceed(feed.version, () => undefined),
      (version) => {
        if (version === undefined || version === this.#followed) return Effect.void
        if (this.#catchingUp?.version !== version) this.#catchingUp = { version, follow: Effect.runFork(this.follow()) }
        return Fiber.await(this.#catchingUp.follow).pipe(Effect.asVoid)
      }
    )
  }

  /**
   * Applies what the shared store's change feed names since the version
   * the snapshot holds: each item read from its store and applied alone; a
   * gap in the feed (trimmed, a change of no one item), or a feed that
   * cannot be read now, is a full reload. Answers the outcome (undefined:
   * nothing had changed), so a watcher can look again after a failure.
   */
  follow(): Effect.Effect<ReloadOutcome | undefined> {
    const feed = this.#feed
    if (feed === undefined) return Effect.succeed(undefined)
    const since = Effect.sync(() => this.#followed)
    return this.#reloading.withPermit(
      Effect.flatMap(since, (followed): Effect.Effect<ReloadOutcome | undefined> => {
        if (followed === undefined) return this.#reloadNow()
        return Effect.flatMap(Effect.result(feed.changesSince(followed)), (read) => {
          // A feed that cannot be read now: a full reload, as every change was before the feed.
          if (read._tag === "Failure") return this.#reloadNow()
          const { version, items } = read.success
          if (version === followed) return Effect.succeed(undefined)
          if (items === undefined) return this.#reloadNow()
          return Effect.tap(this.#changeNow(items), (outcome) =>
            Effect.sync(() => {
              if (outcome.ok) this.#followed = later(this.#followed, version)
            })
          )
        })
      })
    )
  }

  /** Reads the source again now; applies the result only if it is valid. Changes apply one at a time. */
  reload(): Effect.Effect<ReloadOutcome> {
    return this.#reloading.withPermit(this.#reloadNow())
  }

  /**
   * Makes the items an API write changed serve now: read from their stores
   * and applied alone when that is known to be what a full load gives,
   * else a full reload (`config/itemChanges.ts`). An item already served
   * as stored changes nothing (the same generation).
   */
  change(items: ReadonlyArray<ItemRef>): Effect.Effect<ReloadOutcome> {
    return this.#reloading.withPermit(this.#changeNow(items))
  }

  #reloadNow(): Effect.Effect<ReloadOutcome> {
    return Effect.flatMap(feedVersion(this.#feed), (version) =>
      Effect.map(this.#source.load, (loaded) => {
        const outcome = this.apply(loaded)
        if (outcome.ok) this.#followed = later(this.#followed, version)
        return outcome
      })
    )
  }

  #changeNow(items: ReadonlyArray<ItemRef>): Effect.Effect<ReloadOutcome> {
    const read = this.#source.readItems
    if (read === undefined || this.#status.stale) return this.#reloadNow()
    return Effect.flatMap(Effect.result(read(items)), (states) => {
      if (states._tag === "Failure") return this.#reloadNow()
      const current = this.#snapshot
      const applied = applyItems(current.config, states.success)
      if (applied === undefined) return this.#reloadNow()
      if (applied.unchanged)
        return Effect.succeed<ReloadOutcome>({ ok: true, generation: current.generation, change: "incremental", items })
      let engine: Engine | InvalidConfiguration
      try {
        engine = this.#engines.engineAfterChange(current.engine, applied.config)
      } catch {
        return this.#reloadNow()
      }
      if (engine instanceof InvalidConfiguration) return this.#reloadNow()
      const next = snapshotOf(applied.config, engine, current.generation + 1, this.#builtInInstitutions)
      return Effect.succeed(this.#install(next, new Date().toISOString(), items))
    })
  }

  /** After the watcher saw `paths` change: nothing when they hold what the snapshot serves, else a full reload. */
  #filesChanged(paths: ReadonlyArray<string>): Effect.Effect<void> {
    return this.#reloading.withPermit(
      Effect.suspend(() =>
        !this.#status.stale && filesServed(this.#snapshot.config, paths)
          ? Effect.void
          : Effect.asVoid(this.#reloadNow())
      )
    )
  }

  /**
   * Applies a configuration loaded elsewhere (the library's `reload(resources)`)
   * if it is valid; otherwise the snapshot in force stays and the attempt is reported.
   */
  apply(loaded: ConfigLoad): ReloadOutcome {
    const attemptedAt = new Date().toISOString()
    const next = compile(loaded, this.#engines, this.#snapshot.generation + 1, this.#builtInInstitutions)
    if ("engine" in next) return this.#install(next, attemptedAt, undefined)
    const { reloads } = this.#status
    this.#status = {
      ...this.#status,
      stale: true,
      problems: next.problems,
      lastAttemptAt: attemptedAt,
      reloads: { ...reloads, rejected: reloads.rejected + 1 }
    }
    const outcome: ReloadOutcome = { ok: false, problems: next.problems }
    this.#onReload?.(outcome)
    return outcome
  }

  /** Puts `next` in force and reports it: a change of `items` alone, or (undefined) a full reload. */
  #install(next: ConfigSnapshot, attemptedAt: string, items: ReadonlyArray<ItemRef> | undefined): ReloadOutcome {
    const { applied, rejected, incremental } = this.#status.reloads
    this.#snapshot = next
    this.#status = {
      generation: next.generation,
      loadedAt: next.loadedAt,
      stale: false,
      problems: [],
      lastAttemptAt: attemptedAt,
      reloads: { applied: applied + 1, rejected, incremental: incremental + (items === undefined ? 0 : 1) }
    }
    const outcome: ReloadOutcome =
      items === undefined
        ? { ok: true, generation: next.generation, change: "reload" }
        : { ok: true, generation: next.generation, change: "incremental", items }
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
  return snapshotOf(loaded.config, engine, generation, builtInInstitutions)
}

const snapshotOf = (
  config: LoadedConfig,
  engine: Engine,
  generation: number,
  builtInInstitutions: boolean
): ConfigSnapshot => ({
  config,
  engine,
  keys: new ApiKeyIndex(config.apiKeys),
  generation,
  builtInInstitutions,
  loadedAt: new Date().toISOString()
})

/** The feed's version now; undefined without a feed or when it cannot be read (the next change then reloads). */
const feedVersion = (feed: ConfigFeed | undefined): Effect.Effect<string | undefined> =>
  feed === undefined ? Effect.succeed(undefined) : Effect.orElseSucceed(feed.version, () => undefined)

/** The later of two feed versions (numbers as text); an unknown one counts as the earliest. */
const later = (a: string | undefined, b: string | undefined): string | undefined =>
  a === undefined ? b : b === undefined ? a : Number(b) >= Number(a) ? b : a

/** The live snapshot as a service: what the HTTP server, the jobs and the application services read. */
export class Snapshot extends Context.Service<
  Snapshot,
  {
    /** The snapshot in force: read it once per request. */
    current(): ConfigSnapshot
    status(): ReloadStatus
    /**
     * Loads the source again now and applies the result only if it is
     * valid: a write that is no one item (a review decision) calls it so
     * the change serves before the answer; one item's write calls `change`.
     */
    reload(): Effect.Effect<ReloadOutcome>
    /** Makes the items an API write changed serve now, alone where that is sure, else by a full reload (`LiveSnapshot.change`). */
    change(items: ReadonlyArray<ItemRef>): Effect.Effect<ReloadOutcome>
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
      change: (items) => live.change(items),
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
