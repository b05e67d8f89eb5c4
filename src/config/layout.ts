/**
 * Where things live. The config directory is read-mostly and kept in git;
 * the data directory is writable and holds what the running service
 * creates, in the same formats (so an API-created resource can be promoted
 * into git by moving its file).
 *
 * config/                       data/
 *   campusgate.yaml               api-keys.yaml   (the bootstrap key, keys made by `keys create`)
 *   api-keys.yaml (to commit)     target-groups/*.yaml   (created through the API)
 *   target-groups/*.yaml          offers/*.yaml          (created through the API)
 *   offers/*.yaml                 stats/, jobs/          (usage statistics, bulk jobs)
 *   templates/<locale>.yaml       verifications/, outbox/, signing-keys.json  (proof of ownership)
 *   clients/*.yaml                oidc/  (the OpenID Connect provider's sessions, codes and tokens)
 */
import { basename, isAbsolute, relative, resolve, sep } from "node:path"
import { isTemporaryFile } from "../store/atomicWrite.ts"

export const SETTINGS_FILE = "campusgate.yaml"
export const API_KEYS_FILE = "api-keys.yaml"
export const TARGET_GROUPS_DIR = "target-groups"
export const OFFERS_DIR = "offers"
/** The OpenID Connect provider's clients, in the config directory only. */
export const CLIENTS_DIR = "clients"

/** A resource file: `*.yaml` or `*.yml`, not hidden, not a temporary file left by an interrupted write. */
export const isResourceFile = (name: string): boolean =>
  /\.ya?ml$/.test(name) && !name.startsWith(".") && !isTemporaryFile(name)

/** How problems name a file: relative to the working directory when inside it (as CI annotations need), else absolute. */
export const displayPath = (absolute: string): string => {
  const path = relative(process.cwd(), absolute)
  return path === "" || path.startsWith("..") ? absolute : path.split(sep).join("/")
}

/**
 * A problem's file as the HTTP API shows it (`GET /status`): relative to the
 * config directory, a data directory's file as `<data>/…`, a store's document
 * as its name (`redis:…`); never a path of the host's file system.
 */
export const apiPath = (displayed: string, dirs: { readonly configDir: string; readonly dataDir: string }): string => {
  if (/^[a-z]+:/.test(displayed)) return displayed
  const absolute = resolve(displayed)
  for (const [dir, prefix] of [
    [dirs.configDir, ""],
    [dirs.dataDir, "<data>/"]
  ] as const) {
    const path = relative(dir, absolute)
    if (path !== "" && !path.startsWith("..") && !isAbsolute(path)) return prefix + path.split(sep).join("/")
  }
  return basename(absolute)
}
