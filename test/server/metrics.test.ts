import { randomUUID } from "node:crypto"
import { once } from "node:events"
import { rmSync, writeFileSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { allScopes } from "../../src/domain/ApiKey.ts"
import { VERSION } from "../../src/version.ts"
import { call, makeKey, setSettings, sharedDaemon, waitForJob } from "./daemon.ts"

let key: string

const daemon = sharedDaemon((dirs) => {
  key = makeKey(dirs, "acme", allScopes)
  // The callback receiver below listens on loopback, which callbacks reach only when allowed.
  setSettings(dirs, [[["jobs", "callbacks", "allowPrivateNetworks"], true]])
})

const scrape = async (): Promise<string> => {
  const response = await fetch(`${daemon.url}/metrics`)
  expect(response.status).toBe(200)
  return response.text()
}

/** The value of one sample (`name{labels}` exactly as exposed), 0 when absent. */
const sample = (text: string, name: string, labels: Record<string, string> = {}): number => {
  const rendered = Object.entries(labels)
    .map(([label, value]) => `${label}="${value}"`)
    .join(",")
  const prefix = rendered === "" ? `${name} ` : `${name}{${rendered}} `
  const line = text.split("\n").find((candidate) => candidate.startsWith(prefix))
  return line === undefined ? 0 : Number(line.slice(prefix.length))
}

const validateGroup = (email: string, path = "/api/v1/validate/target-group") =>
  call(daemon, "POST", path, { key, body: { email, targetGroupId: "uk-students" } })

/** Scrapes until `ready` holds (a config reload happens in the background). */
const scrapeUntil = async (ready: (text: string) => boolean): Promise<string> => {
  const deadline = Date.now() + 10_000
  let text = await scrape()
  while (!ready(text) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    text = await scrape()
  }
  return text
}

describe("GET /metrics", () => {
  it("answers the Prometheus text format without an API key", async () => {
    const response = await fetch(`${daemon.url}/metrics`)
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8")
    const text = await response.text()
    expect(text).toContain("# TYPE campusgate_config_reloads_total counter")
    expect(text).toContain("# TYPE campusgate_config_stale gauge")
  })

  it("counts requests by method, route pattern and status, with a latency histogram", async () => {
    const route = { method: "POST", route: "/api/v1/validate/target-group", status: "200" }
    const before = await scrape()
    expect((await validateGroup("jane@ox.ac.uk")).status).toBe(200)
    // The /v1 alias counts under the canonical route.
    expect((await validateGroup("sam@ox.ac.uk", "/v1/validate/target-group")).status).toBe(200)
    expect((await validateGroup("not-an-email")).status).toBe(400)
    const after = await scrape()
    expect(sample(after, "campusgate_http_requests_total", route)).toBe(
      sample(before, "campusgate_http_requests_total", route) + 2
    )
    expect(sample(after, "campusgate_http_requests_total", { ...route, status: "400" })).toBe(
      sample(before, "campusgate_http_requests_total", { ...route, status: "400" }) + 1
    )
    expect(after).toContain("# TYPE campusgate_http_request_duration_seconds histogram")
    const count = sample(after, "campusgate_http_request_duration_seconds_count", route)
    expect(count).toBe(sample(before, "campusgate_http_request_duration_seconds_count", route) + 2)
    expect(sample(after, "campusgate_http_request_duration_seconds_bucket", { ...route, le: "+Inf" })).toBe(count)
    expect(sample(after, "campusgate_http_request_duration_seconds_bucket", { ...route, le: "10" })).toBe(count)
    expect(sample(after, "campusgate_http_request_duration_seconds_sum", route)).toBeGreaterThan(0)
    // The scrape itself is counted too.
    expect(sample(after, "campusgate_http_requests_total", { method: "GET", route: "/metrics", status: "200" })).toBe(
      sample(before, "campusgate_http_requests_total", { method: "GET", route: "/metrics", status: "200" }) + 1
    )
  })

  it("collapses paths no route matches into route=unmatched", async () => {
    const unmatched = { method: "GET", route: "unmatched", status: "404" }
    const before = sample(await scrape(), "campusgate_http_requests_total", unmatched)
    const randomPath = `/nowhere-${randomUUID()}`
    expect((await call(daemon, "GET", randomPath)).status).toBe(404)
    expect((await call(daemon, "GET", `/nowhere-${randomUUID()}`)).status).toBe(404)
    const text = await scrape()
    expect(sample(text, "campusgate_http_requests_total", unmatched)).toBe(before + 2)
    expect(text).not.toContain(randomPath)
  })

  it("counts validated emails by result and reason code, bulk and batch items included", async () => {
    const valid = { result: "valid", reason_code: "none" }
    const country = { result: "invalid", reason_code: "COUNTRY_NOT_ALLOWED" }
    const format = { result: "invalid", reason_code: "INVALID_EMAIL_FORMAT" }
    const before = await scrape()
    await validateGroup("jane@ox.ac.uk")
    await validateGroup("bob@mit.edu")
    // A single email with a bad format is a 400, and still a validated email.
    expect((await validateGroup("jane.ox.ac.uk")).status).toBe(400)
    const bulk = await call(daemon, "POST", "/api/v1/validate/bulk", {
      key,
      body: { emails: ["alex@ed.ac.uk", "not an email", "kim@mit.edu", "sam@ox.ac.uk"], targetGroupId: "uk-students" }
    })
    expect(bulk.status).toBe(200)
    // Batch offer processing counts each validated pair; an offer the caller cannot see validated nothing.
    const batch = await call(daemon, "POST", "/api/v1/offers/bulk-process", {
      key,
      body: {
        requests: [
          { offerId: "acme-student-discount", email: "lee@ox.ac.uk" },
          { offerId: "no-such-offer", email: "lee@ox.ac.uk" }
        ]
      }
    })
    expect(batch.status).toBe(200)
    const after = await scrape()
    expect(sample(after, "campusgate_validations_total", valid)).toBe(
      sample(before, "campusgate_validations_total", valid) + 4
    )
    expect(sample(after, "campusgate_validations_total", country)).toBe(
      sample(before, "campusgate_validations_total", country) + 2
    )
    expect(sample(after, "campusgate_validations_total", format)).toBe(
      sample(before, "campusgate_validations_total", format) + 2
    )
  })

  it("counts jobs by final status and shows the queue's occupancy", async () => {
    const scraped = await scrape()
    const before = sample(scraped, "campusgate_jobs_total", { status: "completed" })
    const valid = { result: "valid", reason_code: "none" }
    const country = { result: "invalid", reason_code: "COUNTRY_NOT_ALLOWED" }
    const accepted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
      key,
      body: { emails: ["jane@ox.ac.uk", "bob@mit.edu", "kim@ed.ac.uk"], targetGroupId: "uk-students" }
    })
    expect(accepted.status).toBe(202)
    await waitForJob(daemon, key, accepted.body.jobId)
    const text = await scrape()
    expect(sample(text, "campusgate_jobs_total", { status: "completed" })).toBe(before + 1)
    // A job's emails count as validated emails too (evaluated on a job thread, counted as they come back).
    expect(sample(text, "campusgate_validations_total", valid)).toBe(
      sample(scraped, "campusgate_validations_total", valid) + 2
    )
    expect(sample(text, "campusgate_validations_total", country)).toBe(
      sample(scraped, "campusgate_validations_total", country) + 1
    )
    expect(sample(text, "campusgate_jobs_waiting")).toBe(0)
    expect(sample(text, "campusgate_jobs_running")).toBe(0)
    // A large job is seen running while it runs: scraped between two reads of the job that both say running.
    // Every email has a host of its own, so none shares another's verdict and the job takes a while.
    const emails = Array.from({ length: 300_000 }, (_, i) => JSON.stringify(`s@h${i}.ox.ac.uk`))
    const large = await call(daemon, "POST", "/api/v1/validate/bulk-async?targetGroupId=uk-students", {
      key,
      rawBody: `${emails.join("\n")}\n`,
      headers: { "content-type": "application/x-ndjson" }
    })
    const status = async () => (await call(daemon, "GET", `/api/v1/jobs/${large.body.jobId}`, { key })).body.status
    let whileRunning: number | undefined
    for (let before = await status(); before === "queued" || before === "running"; before = await status()) {
      const running = sample(await scrape(), "campusgate_jobs_running")
      if (before === "running" && (await status()) === "running") {
        whileRunning = running
        break
      }
    }
    expect(whileRunning).toBe(1)
    await waitForJob(daemon, key, large.body.jobId)
  }, 60_000)

  it("counts config reloads, applied and rejected, and shows when the config is stale", async () => {
    const before = await scrape()
    const applied = sample(before, "campusgate_config_reloads_total", { result: "applied" })
    const rejected = sample(before, "campusgate_config_reloads_total", { result: "rejected" })
    expect(sample(before, "campusgate_config_stale")).toBe(0)

    const file = join(daemon.configDir, "target-groups", "metrics-probe.yaml")
    writeFileSync(file, "id: metrics-probe\nname: Metrics probe\ncriteria:\n  domains:\n    allow: [samples.edu]\n")
    const afterGood = await scrapeUntil(
      (text) => sample(text, "campusgate_config_reloads_total", { result: "applied" }) > applied
    )
    expect(sample(afterGood, "campusgate_config_reloads_total", { result: "applied" })).toBe(applied + 1)
    expect(sample(afterGood, "campusgate_config_stale")).toBe(0)

    writeFileSync(file, "id: metrics-probe\n")
    const afterBad = await scrapeUntil(
      (text) => sample(text, "campusgate_config_reloads_total", { result: "rejected" }) > rejected
    )
    expect(sample(afterBad, "campusgate_config_reloads_total", { result: "rejected" })).toBe(rejected + 1)
    expect(sample(afterBad, "campusgate_config_stale")).toBe(1)

    rmSync(file)
    const fixed = await scrapeUntil((text) => sample(text, "campusgate_config_stale") === 0)
    expect(sample(fixed, "campusgate_config_stale")).toBe(0)
    expect(sample(fixed, "campusgate_config_reloads_total", { result: "applied" })).toBe(applied + 2)
  })

  it("shows the process and the runtime: CPU, memory, heap, event-loop delay, GC pauses, versions", async () => {
    // Garbage until the daemon has collected at least once (jobs no longer make any on its thread).
    const collected = /^nodejs_gc_duration_seconds_count\{kind="(minor|major|incremental|weakcb)"\} [1-9]/m
    for (let i = 0; i < 500 && !collected.test(await scrape()); i++) {
      await call(daemon, "POST", "/api/v1/validate/bulk", {
        key,
        body: { emails: Array.from({ length: 1000 }, (_, j) => `gc${j}@ox.ac.uk`), targetGroupId: "uk-students" }
      })
    }
    const text = await scrape()
    expect(text).toContain("# TYPE process_cpu_seconds_total counter")
    expect(sample(text, "process_cpu_seconds_total")).toBeGreaterThan(0)
    expect(sample(text, "process_cpu_user_seconds_total")).toBeGreaterThan(0)
    expect(sample(text, "process_resident_memory_bytes")).toBeGreaterThan(20 * 1024 * 1024)
    expect(sample(text, "process_start_time_seconds")).toBeGreaterThan(Date.now() / 1000 - 600)
    expect(sample(text, "process_start_time_seconds")).toBeLessThanOrEqual(Date.now() / 1000)
    expect(sample(text, "process_open_fds")).toBeGreaterThan(3)
    const heapUsed = sample(text, "nodejs_heap_size_used_bytes")
    expect(heapUsed).toBeGreaterThan(0)
    expect(sample(text, "nodejs_heap_size_total_bytes")).toBeGreaterThanOrEqual(heapUsed)
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds [0-9.e-]+$/m)
    expect(sample(text, "nodejs_eventloop_lag_max_seconds")).toBeGreaterThanOrEqual(
      sample(text, "nodejs_eventloop_lag_min_seconds")
    )
    expect(text).toContain("# TYPE nodejs_gc_duration_seconds histogram")
    expect(text).toMatch(collected)
    expect(text).toMatch(/^nodejs_version_info\{version="v\d+\.\d+\.\d+",major="\d+",minor="\d+",patch="\d+"\} 1$/m)
    expect(sample(text, "campusgate_build_info", { version: VERSION })).toBe(1)
  })

  it("counts every callback delivery attempt that failed", async () => {
    const receiver = createServer((_, response) => response.writeHead(503).end())
    receiver.listen(0, "127.0.0.1")
    await once(receiver, "listening")
    try {
      const failed = { kind: "job", result: "failed" }
      const before = sample(await scrape(), "campusgate_callback_attempts_total", failed)
      const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
      const accepted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
        key,
        body: { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students", callbackUrl }
      })
      expect(accepted.status).toBe(202)
      const text = await scrapeUntil((text) => sample(text, "campusgate_callback_attempts_total", failed) > before)
      expect(sample(text, "campusgate_callback_attempts_total", failed)).toBe(before + 1)
      expect(sample(text, "campusgate_callback_attempts_total", { kind: "job", result: "delivered" })).toBe(0)
    } finally {
      receiver.close()
    }
  })
})
