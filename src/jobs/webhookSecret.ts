/**
 * The secret that signs job callbacks: `CAMPUSGATE_WEBHOOK_SECRET` when set,
 * else one generated on first use and kept in `<dataDir>/webhook-secret`
 * (mode 0600), so signatures stay verifiable across restarts. The file is
 * created atomically: written and flushed under a temporary name, then linked
 * into place, which fails if another process got there first; that process's
 * secret is then read and used.
 */
import { randomBytes } from "node:crypto"
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { basename, dirname, join } from "node:path"

export const WEBHOOK_SECRET_FILE = "webhook-secret"

const writeNew = (path: string, secret: string): void => {
  const temporary = join(dirname(path), `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`)
  const fd = openSync(temporary, "wx", 0o600)
  try {
    writeSync(fd, secret)
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
  const directory = openSync(dirname(path), "r")
  try {
    fsyncSync(directory)
  } finally {
    closeSync(directory)
  }
}

/** The webhook secret for `dataDir`: `configured` if given, else the stored one, created on first use. */
export const webhookSecretFor = (dataDir: string, configured: string | undefined): string => {
  if (configured !== undefined && configured !== "") return configured
  const path = join(dataDir, WEBHOOK_SECRET_FILE)
  const read = (): string | undefined => {
    try {
      return readFileSync(path, "utf8").trim() || undefined
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
      throw error
    }
  }
  const existing = read()
  if (existing !== undefined) return existing
  mkdirSync(dataDir, { recursive: true })
  writeNew(path, randomBytes(32).toString("base64url"))
  const stored = read()
  if (stored === undefined) throw new Error(`${path} is empty`)
  return stored
}
