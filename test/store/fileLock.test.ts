import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { FileLockTimeout, withFileLock } from "../../src/store/fileLock.ts"

const setup = () => {
  const dir = mkdtempSync(join(tmpdir(), "campusgate-lock-"))
  return { file: join(dir, "api-keys.yaml"), lock: join(dir, ".api-keys.yaml.lock") }
}

/** The pid of a process that has exited. */
const deadPid = (): number =>
  spawnSync(process.execPath, [
    "-e",
    "process.stdout.write(String(process.pid))"
  ]).stdout.toString() as unknown as number

describe("withFileLock", () => {
  it("holds the lock while the body runs and removes it after, also when the body throws", () => {
    const { file, lock } = setup()
    expect(withFileLock(file, () => existsSync(lock))).toBe(true)
    expect(existsSync(lock)).toBe(false)
    expect(() =>
      withFileLock(file, () => {
        throw new Error("boom")
      })
    ).toThrow("boom")
    expect(existsSync(lock)).toBe(false)
  })

  it("waits for a live holder, then gives up with FileLockTimeout, leaving the holder's lock alone", () => {
    const { file, lock } = setup()
    writeFileSync(lock, `${process.pid} ${Date.now()} other`)
    expect(() => withFileLock(file, () => "never", { timeoutMs: 100 })).toThrow(FileLockTimeout)
    expect(existsSync(lock)).toBe(true)
  })

  it("breaks a lock left by a process that died, and one older than any write takes", () => {
    const { file, lock } = setup()
    writeFileSync(lock, `${deadPid()} ${Date.now()} crashed`)
    expect(withFileLock(file, () => "ran", { timeoutMs: 100 })).toBe("ran")
    writeFileSync(lock, `${process.pid} ${Date.now()} stuck`)
    expect(withFileLock(file, () => "ran", { timeoutMs: 1000, staleMs: 0 })).toBe("ran")
  })
})
