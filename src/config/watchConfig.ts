/**
 * Watches config and data directories and calls back, debounced, when a
 * file that can change the configuration changes (settings, keys, target
 * groups, offers).
 */
import { existsSync, type FSWatcher, watch } from "node:fs"
import { basename } from "node:path"
import { isTemporaryFile } from "../store/atomicWrite.ts"
import { API_KEYS_FILE, OFFERS_DIR, SETTINGS_FILE, TARGET_GROUPS_DIR } from "./layout.ts"

/** Files whose change may change the configuration (settings, keys, target groups, offers, datasets). */
const isConfigChange = (path: string): boolean => {
  const name = basename(path)
  if (name.startsWith(".") || isTemporaryFile(name)) return false
  const top = path.split(/[\\/]/)[0]
  return name === SETTINGS_FILE || name === API_KEYS_FILE || top === TARGET_GROUPS_DIR || top === OFFERS_DIR
}

/** Starts watching; the returned function stops it. */
export const watchConfigDirectories = (
  directories: ReadonlyArray<string>,
  debounceMs: number,
  onChange: () => void
): (() => void) => {
  let timer: ReturnType<typeof setTimeout> | undefined
  const watchers: Array<FSWatcher> = []
  const schedule = (file: string | null) => {
    if (file !== null && !isConfigChange(file)) return
    clearTimeout(timer)
    timer = setTimeout(onChange, debounceMs)
    timer.unref?.()
  }
  for (const dir of new Set(directories)) {
    if (!existsSync(dir)) continue
    const watcher = watch(dir, { recursive: true, persistent: false }, (_event, file) => schedule(file))
    watcher.on("error", () => schedule(null))
    watchers.push(watcher)
  }
  return () => {
    clearTimeout(timer)
    for (const watcher of watchers.splice(0)) watcher.close()
  }
}
