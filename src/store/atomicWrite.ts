/**
 * Durable file writes for the data directory: the new content goes to a
 * temporary file beside the target, is flushed to disk, and replaces the
 * target by `rename`, which is atomic; the directory is flushed too, so the
 * rename itself survives a crash. A reader sees the old file or the new one,
 * never a mix. A crash can leave a temporary file behind: its name ends in
 * `.tmp` and loaders ignore it (`isTemporaryFile`).
 *
 * What the daemon writes holds addresses, codes, tokens and keys' hashes:
 * files are made readable by the daemon's own user only (`PRIVATE_FILE`,
 * 0600) in directories only it may enter (`PRIVATE_DIRECTORY`, 0700), the
 * one rule for every store's files.
 */
import { randomBytes } from "node:crypto"
import {
  chmodSync,
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  writeSync
} from "node:fs"
import { mkdir, open, rename, rm } from "node:fs/promises"
import { basename, dirname, join } from "node:path"

/** The mode of every file the daemon writes: its own user reads and writes it, nobody else. */
export const PRIVATE_FILE = 0o600

/** The mode of every directory the daemon makes. */
export const PRIVATE_DIRECTORY = 0o700

/** The temporary files `writeFileAtomic` creates: `.<name>.<random>.tmp`. */
export const isTemporaryFile = (name: string): boolean => name.startsWith(".") && name.endsWith(".tmp")

/** Flushes a file, or a directory so that renames, links and removals in it survive a crash. */
export const fsyncPath = (path: string): void => {
  const fd = openSync(path, "r")
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}

/**
 * Writes `content` to `path` atomically and durably, creating its directory
 * if needed; private (`PRIVATE_FILE`) from the start unless `mode` says otherwise.
 */
export const writeFileAtomic = (path: string, content: string | Uint8Array, mode = PRIVATE_FILE): void => {
  const directory = dirname(path)
  mkdirSync(directory, { recursive: true, mode: PRIVATE_DIRECTORY })
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`)
  const fd = openSync(temporary, "wx", mode)
  try {
    const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content
    for (let written = 0; written < bytes.length; ) written += writeSync(fd, bytes, written)
    fsyncSync(fd)
  } catch (error) {
    closeSync(fd)
    rmSync(temporary, { force: true })
    throw error
  }
  closeSync(fd)
  try {
    renameSync(temporary, path)
  } catch (error) {
    rmSync(temporary, { force: true })
    throw error
  }
  fsyncPath(directory)
}

/**
 * `writeFileAtomic` with every step on libuv's pool, so the calling thread
 * is not held by the two fsyncs (a job's checkpoint record, written while
 * the same thread answers requests).
 */
export const writeFileAtomicAsync = async (
  path: string,
  content: string | Uint8Array,
  mode = PRIVATE_FILE
): Promise<void> => {
  const directory = dirname(path)
  await mkdir(directory, { recursive: true, mode: PRIVATE_DIRECTORY })
  const temporary = join(directory, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`)
  const file = await open(temporary, "wx", mode)
  try {
    await file.writeFile(content)
    await file.sync()
  } catch (error) {
    await file.close()
    await rm(temporary, { force: true })
    throw error
  }
  await file.close()
  try {
    await rename(temporary, path)
  } catch (error) {
    await rm(temporary, { force: true })
    throw error
  }
  const parent = await open(directory, "r")
  try {
    await parent.sync()
  } finally {
    await parent.close()
  }
}

/** Creates `directory` (and its parents) when it does not exist, private (`PRIVATE_DIRECTORY`). */
export const ensureDirectory = (directory: string): void => {
  mkdirSync(directory, { recursive: true, mode: PRIVATE_DIRECTORY })
}

/**
 * `ensureDirectory` for a directory of records (verifications, jobs, the
 * outbox): one made by an older version, open to others, is closed too.
 */
export const ensurePrivateDirectory = (directory: string): void => {
  ensureDirectory(directory)
  chmodSync(directory, PRIVATE_DIRECTORY)
}

/** Removes the temporary files an interrupted write left in `directory` (`isTemporaryFile`); none when it is absent. */
export const removeTemporaryFiles = (directory: string): number => {
  let names: Array<string>
  try {
    names = readdirSync(directory)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return 0
    throw error
  }
  const stale = names.filter(isTemporaryFile)
  for (const name of stale) rmSync(join(directory, name), { force: true })
  return stale.length
}

/** Removes `path` durably (no error when it is already gone). */
export const removeFileDurably = (path: string): void => {
  rmSync(path, { force: true })
  fsyncPath(dirname(path))
}
