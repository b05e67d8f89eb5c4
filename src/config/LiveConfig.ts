/**
 * The configuration in force, kept up to date: the config directory (and
 * the data directory's resources) are watched, and a change is loaded,
 * checked and compiled off to the side. A valid change replaces the
 * snapshot in one assignment, so a validation already running finishes on
 * the snapshot it started with; an invalid change leaves the last good
 * snapshot serving and is reported (the `onReload` hook, `status()` for
 * readiness and metrics).
 */
import { existsSync, type FSWatcher, watch } from "node:fs"
import { basename } from "node:path"
import { type ConfigurationProblem, InvalidConfiguration } from "../domain/errors.ts"
import type { Engine } from "../engine/Engine.ts"
import { isTemporaryFile } from "../store/atomicWrite.ts"
import { ConfigEngines } from "./configEngine.ts"
import { API_KEYS_FILE, OFFERS_DIR, SETTINGS_FILE, TARGET_GROUPS_DIR } from "./layout.ts"
import { type ConfigLocation, type LoadedConfig, loadConfig } from "./loadConfig.ts"

export interface ConfigSnapshot {
  readonly config: LoadedConfig
  readonly engine: Engine
  /** 1 for the first load, +1 for each change applied. */
  readonly generation: number
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

export interface LiveConfigOptions {
  /** Watch the directories and reload on change (default false: call `reload()`). */
  readonly watch?: boolean | undefined
  /** Quiet time after the last change before reloading (default 150 ms): an editor's save is several events. */
  readonly debounceMs?: number | undefined
  /** Told about every reload attempt after the first load. */
  readonly onReload?: ((outcome: ReloadOutcome) => void) | undefined
  /** The clock for offer windows (default `Date.now`). */
  readonly now?: (() => number) | undefined
}

/** Files whose change may change the configuration (settings, keys, target groups, offers, datasets). */
const isConfigChange = (path: string): boolean => {
  const name = basename(path)
  if (name.startsWith(".") || isTemporaryFile(name)) return false
  const top = path.split(/[\\/]/)[0]
  return name === SETTINGS_FILE || name === API_KEYS_FILE || top === TARGET_GROUPS_DIR || top === OFFERS_DIR
}

export class LiveConfig {
  readonly #location: ConfigLocation
  readonly #engines: ConfigEngines
  readonly #onReload: ((outcome: ReloadOutcome) => void) | undefined
  readonly #watchers: Array<FSWatcher> = []
  #snapshot: ConfigSnapshot
  #status: ReloadStatus
  #timer: ReturnType<typeof setTimeout> | undefined

  private constructor(
    location: ConfigLocation,
    engines: ConfigEngines,
    snapshot: ConfigSnapshot,
    options: LiveConfigOptions
  ) {
    this.#location = location
    this.#engines = engines
    this.#snapshot = snapshot
    this.#onReload = options.onReload
    this.#status = {
      generation: 1,
      loadedAt: snapshot.loadedAt,
      stale: false,
      problems: [],
      lastAttemptAt: snapshot.loadedAt,
      reloads: { applied: 0, rejected: 0 }
    }
  }

  /** Loads the configuration; it must be valid to start. */
  static load(location: ConfigLocation, options: LiveConfigOptions = {}): LiveConfig | InvalidConfiguration {
    const engines = new ConfigEngines({ now: options.now })
    const first = compile(location, engines, 1)
    if (!("engine" in first)) return new InvalidConfiguration({ problems: first.problems })
    const live = new LiveConfig(location, engines, first, options)
    if (options.watch === true) live.#watch(options.debounceMs ?? 150)
    return live
  }

  /** The snapshot in force: read it once per request and use that. */
  current(): ConfigSnapshot {
    return this.#snapshot
  }

  status(): ReloadStatus {
    return this.#status
  }

  /** Loads the directories again now; applies the result only if it is valid. */
  reload(): ReloadOutcome {
    const attemptedAt = new Date().toISOString()
    const next = compile(this.#location, this.#engines, this.#snapshot.generation + 1)
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
    clearTimeout(this.#timer)
    for (const watcher of this.#watchers.splice(0)) watcher.close()
  }

  #watch(debounceMs: number): void {
    const schedule = (file: string | null) => {
      if (file !== null && !isConfigChange(file)) return
      clearTimeout(this.#timer)
      this.#timer = setTimeout(() => this.reload(), debounceMs)
      this.#timer.unref?.()
    }
    const { configDir, dataDir } = this.#snapshot.config
    for (const dir of new Set([configDir, dataDir])) {
      if (!existsSync(dir)) continue
      const watcher = watch(dir, { recursive: true, persistent: false }, (_event, file) => schedule(file))
      watcher.on("error", () => schedule(null))
      this.#watchers.push(watcher)
    }
  }
}

const compile = (
  location: ConfigLocation,
  engines: ConfigEngines,
  generation: number
): ConfigSnapshot | { readonly problems: ReadonlyArray<ConfigurationProblem> } => {
  const loaded = loadConfig(location)
  if (!loaded.ok) return { problems: loaded.problems }
  let engine: Engine | InvalidConfiguration
  try {
    engine = engines.engineFor(loaded.config)
  } catch (error) {
    return { problems: [{ path: "institutions", message: (error as Error).message }] }
  }
  if (engine instanceof InvalidConfiguration) return { problems: engine.problems }
  return { config: loaded.config, engine, generation, loadedAt: new Date().toISOString() }
}
