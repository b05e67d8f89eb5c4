/**
 * Watches the config and data directories and calls back, debounced, when a
 * file that can change the configuration changes: `campusgate.yaml`,
 * `api-keys.yaml`, the YAML files under `target-groups/`, `offers/`
 * and `templates/` (verification messages), and the reviewed dataset
 * (`datasets/reviewed.yaml`, or `reviewed.yaml` in the data directory).
 *
 * Built on chokidar, polling the few paths that matter every 100 ms, not on
 * change events. Event watchers follow a file's inode: Node's recursive
 * `fs.watch` on Linux stopped seeing a file once it had been replaced by
 * rename (what editors, `sed -i` and our own atomic writes do), and
 * chokidar's event mode stops seeing a file once `git checkout` has
 * replaced it (both measured, test/config/watchConfig.test.ts). Polling
 * compares each path's stat, so a file replaced, deleted and created again,
 * or swapped under a symlink (a Kubernetes ConfigMap) is always seen, also
 * on volumes that send no events (bind mounts from macOS, NFS). A config
 * directory holds tens of files, so this is tens of `stat` calls every
 * 100 ms; jobs and statistics, which change all the time, are never
 * watched. Dot-files and the temporary files of atomic writes are ignored;
 * the debounce turns an editor's save or a checkout (many changes) into one
 * reload, read after the last change. A change is seen within the poll
 * interval plus the debounce (about 250 ms by default).
 */
import { existsSync } from "node:fs"
import { readdir, stat } from "node:fs/promises"
import { basename, join, relative, sep } from "node:path"
import { watch } from "chokidar"
import { isTemporaryFile } from "../store/atomicWrite.ts"
import { API_KEYS_FILE, CLIENTS_DIR, OFFERS_DIR, SETTINGS_FILE, TARGET_GROUPS_DIR } from "./layout.ts"
import { TEMPLATES_DIR } from "./messageTemplates.ts"
import { REVIEWED_CONFIG_FILE, REVIEWED_DATA_FILE } from "./reviewedDatasets.ts"

/** How often each watched path is checked. */
const POLL_INTERVAL_MS = 100

const RESOURCE_DIRS: ReadonlySet<string> = new Set([TARGET_GROUPS_DIR, OFFERS_DIR, TEMPLATES_DIR, CLIENTS_DIR])
const TOP_FILES: ReadonlySet<string> = new Set([SETTINGS_FILE, API_KEYS_FILE, REVIEWED_DATA_FILE])
/** The reviewed dataset in the config directory (`datasets/reviewed.yaml`): the one file of `datasets/` watched. */
const [REVIEWED_DIR, REVIEWED_NAME] = REVIEWED_CONFIG_FILE.split(sep) as [string, string]

/** Whether `path`, inside one of `roots`, can change the configuration (or leads to what can). */
const isWatched = (roots: ReadonlyArray<string>, path: string): boolean => {
  for (const root of roots) {
    const inside = relative(root, path)
    if (inside.startsWith("..")) continue
    if (inside === "") return true
    const parts = inside.split(sep)
    const name = parts[parts.length - 1]!
    if (name.startsWith(".") || isTemporaryFile(name)) return false
    if (parts.length === 1) return TOP_FILES.has(name) || RESOURCE_DIRS.has(name) || name === REVIEWED_DIR
    if (parts[0] === REVIEWED_DIR) return parts.length === 2 && name === REVIEWED_NAME
    return parts.length === 2 && RESOURCE_DIRS.has(parts[0]!) && /\.ya?ml$/.test(name)
  }
  return false
}

/**
 * Resolves once each watched path's first stat, the baseline later ones are
 * compared with, has been taken: a change made before it would be the
 * baseline itself (measured: 3 of 20 missed when ready at the scan's end).
 * Node's `fs.watchFile` queues that stat on libuv's thread pool as chokidar
 * starts watching the path, before chokidar's "ready"; the pool starts its
 * work first in, first out, so once a stat of every watched path queued
 * after "ready" has answered, every baseline has been taken. This waits as
 * long as the pool is busy, no longer: ~1 ms on an idle machine, where a
 * fixed wait of two poll intervals (200 ms) held up every start
 * (test/config/watchConfig.test.ts keeps the pool busy). Answers what
 * those stats found, which is the baseline or later.
 */
const baselinesTaken = async (watched: Record<string, ReadonlyArray<string>>): Promise<Baselines> => {
  const paths = Object.entries(watched).flatMap(([directory, names]) => [
    directory,
    ...names.map((name) => join(directory, name))
  ])
  const stats = await Promise.all(paths.map((path) => stat(path).catch(() => undefined)))
  const baselines: Baselines = new Map()
  paths.forEach((path, i) => {
    const taken = stats[i]
    if (taken !== undefined) baselines.set(path, { mtimeMs: taken.mtimeMs, directory: taken.isDirectory() })
  })
  return baselines
}

/** Each watched path's baseline: its modification time (epoch ms), and whether it is a directory. */
export type Baselines = Map<string, { readonly mtimeMs: number; readonly directory: boolean }>

/**
 * The watched files that may have changed at or after `since` without the
 * watcher seeing it, their baselines taken after the change: files modified
 * since, and the entries added to or removed from a directory modified since.
 */
export const changedBefore = async (
  roots: ReadonlyArray<string>,
  baselines: Baselines,
  watched: Record<string, ReadonlyArray<string>>,
  since: number
): Promise<Array<string>> => {
  const changed: Array<string> = []
  for (const [path, baseline] of baselines) {
    if (baseline.mtimeMs < since) continue
    if (!baseline.directory) {
      changed.push(path)
      continue
    }
    const before = new Set((watched[path] ?? []).map((name) => join(path, name)))
    const now = new Set(
      (await readdir(path).catch(() => [])).map((name) => join(path, name)).filter((entry) => isWatched(roots, entry))
    )
    for (const entry of now) if (!before.has(entry)) changed.push(entry)
    for (const entry of before) if (!now.has(entry) && !baselines.get(entry)?.directory) changed.push(entry)
  }
  return [...new Set(changed)]
}

export interface ConfigWatcher {
  /** Resolves once the directories' first scan is done (`ready` follows once each path's baseline is taken). */
  readonly scanned: Promise<void>
  /** Resolves once the directories are being watched (their first scan is done); changes before may be missed. */
  readonly ready: Promise<void>
  /**
   * Once ready: the watched files that may have changed at or after `since`
   * (epoch ms) but before their baseline was taken, which the watcher
   * cannot report (a change made while the first load ran, after it had
   * read the file). The caller compares them with what it loaded.
   */
  changedSince(since: number): Promise<ReadonlyArray<string>>
  /** Stops watching. */
  close(): void
}

/** Starts watching `directories`; `onChange` runs `debounceMs` after the last change, with every path that changed. */
export const watchConfigDirectories = (
  directories: ReadonlyArray<string>,
  debounceMs: number,
  onChange: (paths: ReadonlyArray<string>) => void
): ConfigWatcher => {
  // A root that does not exist is not watched: chokidar stops seeing the others when asked to (the daemon
  // creates its data directory before it loads; a library without one watches its config directory alone).
  const roots = [...new Set(directories)].filter((directory) => existsSync(directory))
  let timer: ReturnType<typeof setTimeout> | undefined
  let changed = new Set<string>()
  const schedule = (path: string) => {
    if (basename(path).startsWith(".")) return
    changed.add(path)
    clearTimeout(timer)
    timer = setTimeout(() => {
      const paths = [...changed]
      changed = new Set()
      onChange(paths)
    }, debounceMs)
  }
  const watcher = watch(roots, {
    ignoreInitial: true,
    persistent: false,
    usePolling: true,
    interval: POLL_INTERVAL_MS,
    ignored: (path) => !isWatched(roots, path)
  })
  watcher.on("all", (_event, path) => schedule(path))
  // A directory that cannot be watched (removed, permissions) is re-read at the next change; nothing to do here.
  watcher.on("error", () => {})
  const scanned = new Promise<void>((resolve) => watcher.once("ready", () => resolve()))
  const baselines = scanned.then(() => {
    const watched = watcher.getWatched()
    return baselinesTaken(watched).then((taken) => ({ taken, watched }))
  })
  return {
    scanned,
    ready: baselines.then(() => undefined),
    changedSince: (since) => baselines.then(({ taken, watched }) => changedBefore(roots, taken, watched, since)),
    close: () => {
      clearTimeout(timer)
      void watcher.close()
    }
  }
}
