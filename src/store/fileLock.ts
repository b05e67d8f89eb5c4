/**
 * An exclusive lock around a read-modify-write of one file, across
 * processes: `.<file>.lock` beside it is created with `O_EXCL` (only one creator
 * succeeds) holding the owner's pid and start time, and removed when the
 * work is done. Another writer waits for it, polling every few
 * milliseconds, up to a timeout.
 *
 * A lock left by a process that died (SIGKILL, power loss) is broken: its
 * pid is not alive on this host, or it is older than any write takes
 * (`staleMs`). It is removed only if it still holds what was judged stale,
 * re-read just before, so a fresh lock is not taken for a dead one; two
 * writers breaking the same dead lock in the same instant remain possible,
 * and only after a crash.
 *
 * Synchronous, like the writes it guards (the `campusgate keys` command and
 * the key files' adapter): waiting blocks the thread, for milliseconds.
 */
import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from "node:fs"
import { basename, dirname, join } from "node:path"
import { PRIVATE_FILE } from "./atomicWrite.ts"

export interface FileLockOptions {
  /** How long to wait for another writer (default 10 s). */
  readonly timeoutMs?: number | undefined
  /** A lock older than this is left by a dead writer (default 60 s). */
  readonly staleMs?: number | undefined
}

export class FileLockTimeout extends Error {
  override readonly name = "FileLockTimeout"
}

const sleeper = new Int32Array(new SharedArrayBuffer(4))
const sleep = (ms: number) => Atomics.wait(sleeper, 0, 0, ms)

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const readLock = (lockPath: string): { readonly text: string; readonly ageMs: number } | undefined => {
  try {
    return { text: readFileSync(lockPath, "utf8"), ageMs: Date.now() - statSync(lockPath).mtimeMs }
  } catch {
    return undefined
  }
}

const isStale = (lock: { readonly text: string; readonly ageMs: number }, staleMs: number): boolean => {
  const pid = Number(lock.text.split(" ")[0])
  return lock.ageMs > staleMs || (Number.isInteger(pid) && pid > 0 && !isAlive(pid))
}

/** Runs `body` holding the lock of `path`; throws `FileLockTimeout` when another writer holds it too long. */
export const withFileLock = <A>(path: string, body: () => A, options: FileLockOptions = {}): A => {
  const lockPath = join(dirname(path), `.${basename(path)}.lock`)
  const timeoutMs = options.timeoutMs ?? 10_000
  const staleMs = options.staleMs ?? 60_000
  const mine = `${process.pid} ${Date.now()} ${Math.random().toString(36).slice(2)}`
  const deadline = Date.now() + timeoutMs
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(lockPath, "wx", PRIVATE_FILE)
      try {
        writeSync(fd, mine)
      } finally {
        closeSync(fd)
      }
      break
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
    }
    const held = readLock(lockPath)
    if (held !== undefined && isStale(held, staleMs) && readLock(lockPath)?.text === held.text) {
      rmSync(lockPath, { force: true })
      continue
    }
    if (Date.now() > deadline) {
      throw new FileLockTimeout(`${path} is locked by another writer (${lockPath}); try again`)
    }
    sleep(Math.min(50, 2 + attempt))
  }
  try {
    return body()
  } finally {
    if (readLock(lockPath)?.text === mine) rmSync(lockPath, { force: true })
  }
}
