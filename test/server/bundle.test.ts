/**
 * The `campusgate` executable as the package and the Docker image ship it:
 * the bundle `npm run build` writes to `dist/daemon/` (`scripts/build-daemon.ts`).
 * It starts (its config-loading thread included), serves the API, the docs
 * page and the console from the package's files, and runs a job on its job
 * threads, which it starts from the modules beside it.
 */
import { existsSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { call, copyConfig, type Daemon, makeKey, setSettings, startDaemon, waitForJob } from "./daemon.ts"

const bundle = fileURLToPath(new URL("../../dist/daemon/campusgate.js", import.meta.url))

describe("the daemon's bundle", () => {
  let daemon: Daemon
  let key: string

  beforeAll(async () => {
    // `npm install` builds it (the `prepare` script), before any test runs.
    expect(existsSync(bundle), `${bundle} is missing: run npm run build`).toBe(true)
    const dirs = copyConfig()
    setSettings(dirs, [[["jobs", "workerThreads"], 1]])
    key = makeKey(dirs, "acme", ["validate:target-groups", "validate:bulk", "jobs:read"])
    daemon = await startDaemon(dirs, {}, { bin: bundle })
  }, 30_000)
  afterAll(() => daemon?.stop())

  it("serves the API, the docs page and the console from the package's files", async () => {
    const answer = await call(daemon, "POST", "/api/v1/validate/target-group", {
      key,
      body: { email: "jane@ox.ac.uk", targetGroupId: "uk-students" }
    })
    expect(answer).toMatchObject({ status: 200, body: { isValid: true } })
    for (const path of ["/docs", "/console/", "/healthz"])
      expect((await fetch(`${daemon.url}${path}`)).status).toBe(200)
  })

  it("runs a job on a job thread started from the modules beside it", async () => {
    const emails = Array.from({ length: 5000 }, (_, i) => (i % 2 === 0 ? `s${i}@ox.ac.uk` : `s${i}@gmail.com`))
    const submitted = await call(daemon, "POST", "/api/v1/validate/bulk-async?targetGroupId=uk-students", {
      key,
      rawBody: emails.map((email) => JSON.stringify(email)).join("\n"),
      headers: { "content-type": "application/x-ndjson" }
    })
    expect(submitted.status).toBe(202)
    const job = await waitForJob(daemon, key, submitted.body.jobId)
    expect(job).toMatchObject({ status: "completed", counts: { valid: 2500, invalid: 2500 } })
  })
})
