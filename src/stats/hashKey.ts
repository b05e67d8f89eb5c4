/**
 * The key of the unique-email hash. From `CAMPUSGATE_STATS_SECRET` when set
 * (so replicas sharing a store agree); otherwise generated once per data
 * directory and kept in `<dataDir>/stats/hash-key` (mode 0600), so counts
 * stay consistent across restarts. Created with an exclusive link, so two
 * processes starting together end up with the same key. Changing the key
 * makes addresses already counted count again (the registers are kept).
 */
import { createHash, randomBytes } from "node:crypto"
import { closeSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs"
import { join } from "node:path"
import { type HashKey, hashKeyFromBytes } from "./emailHash.ts"
import { statsDirectory } from "./usageFiles.ts"

export const HASH_KEY_FILE = "hash-key"

const derive = (material: string): HashKey =>
  hashKeyFromBytes(createHash("sha256").update("campusgate-stats-hash-key\0").update(material).digest())

/** A key from a secret (the same secret always gives the same key). */
export const hashKeyFromSecret = (secret: string): HashKey => derive(secret)

/** A fresh random key (memory-only statistics). */
export const randomHashKey = (): HashKey => derive(randomBytes(32).toString("hex"))

const fsyncPath = (path: string): void => {
  const fd = openSync(path, "r")
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/** The data directory's key file, created if absent; returns its content. */
const keyFileContent = (dataDir: string): string => {
  const directory = statsDirectory(dataDir)
  const path = join(directory, HASH_KEY_FILE)
  try {
    return readFileSync(path, "utf8").trim()
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error
  }
  mkdirSync(directory, { recursive: true })
  const temporary = join(directory, `.${HASH_KEY_FILE}.${randomBytes(6).toString("hex")}.tmp`)
  const fd = openSync(temporary, "wx", 0o600)
  try {
    writeSync(fd, `${randomBytes(32).toString("hex")}\n`)
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
  return readFileSync(path, "utf8").trim()
}

/** The key for a data directory: from `secret` when given, else its key file. */
export const hashKeyFor = (dataDir: string, secret: string | undefined): HashKey =>
  secret === undefined ? derive(keyFileContent(dataDir)) : hashKeyFromSecret(secret)
