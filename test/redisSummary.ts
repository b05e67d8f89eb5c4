/**
 * Vitest global setup: gives the test processes a file to note the suites
 * they skipped for want of Redis or PostgreSQL (`redisTesting.ts`,
 * `postgresTesting.ts`), and at the end of the
 * run prints them together, so a run without Redis cannot pass unnoticed.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export default function setup(): () => void {
  const directory = mkdtempSync(join(tmpdir(), "campusgate-skipped-"))
  const file = join(directory, "skipped.txt")
  process.env.CAMPUSGATE_SKIPPED_SUITES_FILE = file
  return () => {
    let skipped: Array<string> = []
    try {
      skipped = [...new Set(readFileSync(file, "utf8").split("\n").filter(Boolean))]
    } catch {
      // Nothing was skipped.
    }
    rmSync(directory, { recursive: true, force: true })
    if (skipped.length === 0) return
    console.warn(
      [
        "",
        "!!! These suites did NOT run: they need a Redis server (CAMPUSGATE_TEST_REDIS_URL, else 127.0.0.1:6379)",
        "!!! or the redis-server program, or a PostgreSQL server (CAMPUSGATE_TEST_DATABASE_URL, else 127.0.0.1:5432,",
        "!!! database test); .ci/run requires them (CAMPUSGATE_REQUIRE_REDIS=1, CAMPUSGATE_REQUIRE_POSTGRES=1).",
        ...skipped.map((suite) => `!!!   - ${suite}`),
        ""
      ].join("\n")
    )
  }
}
