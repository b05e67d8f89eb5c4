/**
 * Durable file writes for the data directory: the new content goes to a
 * temporary file beside the target, is flushed to disk, and replaces the
 * target by `rename`, which is atomic; the directory is flushed too, so the
 * rename itself survives a crash. A reader sees the old file or the new one,
 * never a mix. A crash can leave a temporary file behind: its name ends in
 * `.tmp` and loaders ignore it (`isTemporaryFile`).
 */
import { randomBytes } from "node:crypto"
import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs"
import { mkdir, open, rename, rm } from "node:fs/promises"
import { basename, dirname, join } from "node:path"

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
 * if needed; `mode` 0o600 keeps a secret unreadable to others from the start.
 */
export const writeFileAtomic = (path: string, content: string | Uint8Array, mode = 0o644): void => {
  const directory = dirname(path)
  mkdirSync(directory, { recursive: true })
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
export const writeFileAtomicAsync = async (path: string, content: string | Uint8Array, mode = 0o644): Promise<void> => {
  const directory = dirname(path)
  await mkdir(directory, { recursive: true })
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

/** Creates `directory` (and its parents) when it does not exist. */
export const ensureDirectory = (directory: string): void => {
  mkdirSync(directory, { recursive: true })
}

/** Removes `path` durably (no error when it is already gone). */
export const removeFileDurably = (path: string): void => {
  rmSync(path, { force: true })
  fsyncPath(dirname(path))
}
