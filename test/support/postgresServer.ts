/**
 * A PostgreSQL server of a test's own, so that it can be stopped and started
 * again mid-traffic without touching the machine's shared one: `initdb` a
 * temporary data directory, `pg_ctl start` on a free loopback port (trust
 * authentication, user `postgres`), `restart` as a crash would (`-m
 * immediate`: connections cut, no checkpoint, the write-ahead log replayed
 * at start). Run as the `postgres` user (`runuser`) when the test runs as
 * root, since PostgreSQL refuses to. The binaries are found under
 * `/usr/lib/postgresql/<version>/bin` or on the PATH; without them
 * (`postgresBinaries` undefined) the suites that need one skip loudly
 * (`describeWithPostgresServer`), or fail with `CAMPUSGATE_REQUIRE_POSTGRES=1`.
 */
import { execFile, execFileSync, spawnSync } from "node:child_process"
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { describe } from "vitest"
import { type Suite, skippedForWantOfRedis } from "../redisTesting.ts"
import { freePort } from "../server/daemon.ts"

/** The directory holding `initdb` and `pg_ctl`, or undefined when PostgreSQL's server is not installed. */
export const postgresBinaries: string | undefined = (() => {
  const root = "/usr/lib/postgresql"
  const versions = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a)) : ([] as Array<string>)
  for (const version of versions) {
    const bin = join(root, version, "bin")
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl"))) return bin
  }
  const found = spawnSync("sh", ["-c", "command -v pg_ctl"], { encoding: "utf8" }).stdout.trim()
  return found === "" ? undefined : join(found, "..")
})()

const asRoot = process.getuid?.() === 0

/** `describe` when PostgreSQL's server binaries are installed (or required: then it fails); else skipped, said loudly. */
export const describeWithPostgresServer: Suite = (name, body) => {
  if (postgresBinaries !== undefined || process.env.CAMPUSGATE_REQUIRE_POSTGRES === "1") {
    describe(name, body)
    return
  }
  skippedForWantOfRedis(name, "PostgreSQL's server binaries (initdb, pg_ctl) are not installed")
  describe.skip(name, body)
}

const execFileAsync = promisify(execFile)

export interface PostgresServer {
  readonly port: number
  /** A URL of database `postgres` on it. */
  readonly url: string
  /** Stops it as a crash would and starts it again after `downMs`; resolves once it accepts connections. */
  restart(downMs: number): Promise<void>
  stop(): Promise<void>
}

/** Starts a server of the test's own (`postgresBinaries` must be defined). */
export const startPostgresServer = async (): Promise<PostgresServer> => {
  const bin = postgresBinaries
  if (bin === undefined) throw new Error("PostgreSQL's server binaries are not installed")
  // As root, under /tmp itself: the test run's own temporary directory is closed to the `postgres` user.
  const dir = mkdtempSync(join(asRoot ? "/tmp" : tmpdir(), "campusgate-pg-"))
  const data = join(dir, "data")
  const log = join(dir, "server.log")
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim())
    const gid = Number(execFileSync("id", ["-g", "postgres"], { encoding: "utf8" }).trim())
    chownSync(dir, uid, gid)
  }
  /** Runs one of the server's programs (as `postgres` when the test is root), without holding the event loop. */
  const run = async (program: string, args: ReadonlyArray<string>) => {
    const command = asRoot ? "runuser" : join(bin, program)
    const argv = asRoot ? ["-u", "postgres", "--", join(bin, program), ...args] : [...args]
    try {
      await execFileAsync(command, argv, { cwd: dir })
    } catch (error) {
      const { stderr = "", stdout = "" } = error as { stderr?: string; stdout?: string }
      throw new Error(`${program} failed: ${stderr}${stdout}`)
    }
  }
  await run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
  const port = await freePort()
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=on`
  const start = () => run("pg_ctl", ["-D", data, "-l", log, "-o", options, "-w", "-t", "30", "start"])
  await start()
  return {
    port,
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async (downMs) => {
      await run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"])
      await new Promise((resolve) => setTimeout(resolve, downMs))
      await start()
    },
    stop: async () => {
      try {
        await run("pg_ctl", ["-D", data, "-m", "fast", "-w", "stop"])
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    }
  }
}
