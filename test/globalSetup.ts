/**
 * The test run's own temporary directory. Tests make their config and data
 * directories under the system's temporary folder (`os.tmpdir()`), and so
 * do the daemons they start, which inherit the environment: pointing
 * `TMPDIR` at one fresh directory for the run and removing it at the end
 * leaves nothing behind, however a test ends (a whole run left 156
 * `campusgate-*` directories, 212 MB, before).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

export default function setup(): () => void {
  const root = mkdtempSync(join(tmpdir(), "campusgate-test-run-"))
  const previous = { TMPDIR: process.env.TMPDIR, TMP: process.env.TMP, TEMP: process.env.TEMP }
  // TMPDIR on Unix, TMP and TEMP on Windows: what os.tmpdir() reads, in the workers started after this.
  process.env.TMPDIR = root
  process.env.TMP = root
  process.env.TEMP = root
  return () => {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name]
      else process.env[name] = value
    }
    rmSync(root, { recursive: true, force: true, maxRetries: 3 })
  }
}
