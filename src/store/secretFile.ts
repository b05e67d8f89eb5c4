/**
 * A secret generated once per data directory and kept in a file only its
 * owner can read (mode 0600): the webhook signing secret, the key of the
 * unique-email hash. Creation is atomic and race-free: the secret is written
 * and flushed under a temporary name, then hard-linked into place, which
 * fails if another process got there first — both then use that process's
 * secret. The directory is flushed, so the secret survives a crash.
 */
import { randomBytes } from "node:crypto"
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { ensureDirectory, fsyncPath } from "./atomicWrite.ts"

/** The secret stored at `path`; undefined when there is none. */
export const readSecret = (path: string): string | undefined => {
  try {
    return readFileSync(path, "utf8").trim() || undefined
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
}

/** The secret stored at `path`, created from `generate()` when there is none yet. */
export const secretFile = (path: string, generate: () => string = () => randomBytes(32).toString("base64url")) => {
  const existing = readSecret(path)
  if (existing !== undefined) return existing
  const directory = dirname(path)
  ensureDirectory(directory)
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`)
  const fd = openSync(temporary, "wx", 0o600)
  try {
    writeSync(fd, `${generate()}\n`)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    linkSync(temporary, path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
  } finally {
    rmSync(temporary, { force: true })
  }
  fsyncPath(directory)
  const stored = readSecret(path)
  if (stored === undefined) throw new Error(`${path} is empty`)
  return stored
}
