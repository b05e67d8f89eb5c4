/**
 * Asynchronous bulk jobs end to end on the real daemon: submit as JSON,
 * NDJSON and CSV; follow a job to completion; page and download results;
 * idempotency; cancellation and deletion; the queue-full 503; isolation and
 * scopes; the signed completion callback.
 */
import { readdirSync } from "node:fs"
import { createServer, type IncomingMessage, request } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { defaultJobThreads } from "../../src/server/jobService.ts"
import { verifyCallback } from "../../src/webhooks/delivery.ts"
import { call, copyConfig, type Daemon, makeKey, setSettings, sharedDaemon, startDaemon, waitForJob } from "./daemon.ts"

const ndjson = (lines: ReadonlyArray<string>) => `${lines.join("\n")}\n`

describe("asynchronous bulk jobs", () => {
  let acme: string
  let reader: string
  let globex: string
  const webhookSecret = "whsec-test-secret"

  const daemon = sharedDaemon((dirs) => {
    setSettings(dirs, [
      [["limits", "jobMaxEmails"], 5000],
      [["rateLimits", "bulk", "requests"], 1000],
      [["rateLimits", "jobs", "requests"], 1000],
      // The callback receiver of these tests listens on loopback, which callbacks reach only when allowed.
      [["jobs", "callbacks", "allowHosts"], ["127.0.0.1"]]
    ])
    acme = makeKey(dirs, "acme", ["validate:bulk", "jobs:read", "offers:read"])
    reader = makeKey(dirs, "acme", ["jobs:read"])
    globex = makeKey(dirs, "globex", ["validate:bulk", "jobs:read"])
    return { CAMPUSGATE_WEBHOOK_SECRET: webhookSecret }
  })

  /** Submits `body`, sent as `contentType`, as acme's job for uk-students; answers the job once it has finished. */
  const finishedUkJob = async (body: string, contentType: string) => {
    const submitted = await call(daemon, "POST", "/api/v1/validate/bulk-async?targetGroupId=uk-students", {
      key: acme,
      rawBody: body,
      headers: { "content-type": contentType }
    })
    expect(submitted.status).toBe(202)
    return waitForJob(daemon, acme, submitted.body.jobId)
  }

  it("accepts a JSON batch with 202 and Location, runs it, and answers its results in input order", async () => {
    const emails = ["jane@ox.ac.uk", "not an email", "bob@mit.edu", "JANE@ox.ac.uk", "kim@cam.ac.uk"]
    const accepted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
      key: acme,
      body: { emails, targetGroupId: "uk-students" }
    })
    expect(accepted.status).toBe(202)
    const { jobId } = accepted.body
    expect(accepted.body).toEqual({
      jobId: expect.any(String),
      status: "queued",
      links: { self: `/api/v1/jobs/${jobId}`, results: `/api/v1/jobs/${jobId}/results` }
    })
    expect(accepted.headers.get("location")).toBe(`/api/v1/jobs/${jobId}`)

    const job = await waitForJob(daemon, acme, jobId)
    expect(job).toMatchObject({
      jobId,
      status: "completed",
      target: { targetGroupId: "uk-students" },
      progress: { total: 5, processed: 5, percent: 100 },
      counts: { valid: 3, invalid: 2, duplicates: 1, badInput: 0 }
    })
    expect(Date.parse(job.expiresAt)).toBeGreaterThan(Date.parse(job.finishedAt))

    const first = await call(daemon, "GET", `/api/v1/jobs/${jobId}/results?limit=2`, { key: acme })
    expect(first.status).toBe(200)
    expect(first.body.data.map((row: { email: string }) => row.email)).toEqual(emails.slice(0, 2))
    expect(first.body.data[0]).toMatchObject({ isValid: true, matchedDomain: "ox.ac.uk" })
    expect(first.body.data[1]).toMatchObject({ isValid: false, reasonCode: "INVALID_EMAIL_FORMAT" })
    const rest = await call(daemon, "GET", `/api/v1/jobs/${jobId}/results?cursor=${first.body.nextCursor}`, {
      key: acme
    })
    expect(rest.body.data.map((row: { email: string }) => row.email)).toEqual(emails.slice(2))
    expect(rest.body.nextCursor).toBeNull()
  })

  it("takes a streamed NDJSON body and a CSV body, and downloads results as NDJSON and CSV", async () => {
    const lines = ['"jane@ox.ac.uk"', '{"email":"bob@mit.edu","name":"Bob"}', "42", '"jane@ox.ac.uk"']
    const job = await finishedUkJob(ndjson(lines), "application/x-ndjson")
    expect(job.counts).toEqual({ valid: 2, invalid: 2, duplicates: 1, badInput: 1 })

    const download = await fetch(`${daemon.url}/api/v1/jobs/${job.jobId}/results`, {
      headers: { authorization: `Bearer ${acme}`, accept: "application/x-ndjson" }
    })
    expect(download.headers.get("content-type")).toMatch(/^application\/x-ndjson/)
    const rows = (await download.text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line))
    expect(rows.map((row) => row.email)).toEqual(["jane@ox.ac.uk", "bob@mit.edu", "42", "jane@ox.ac.uk"])

    const csv = 'Name,Email\r\n"Doe, Jane",jane@ox.ac.uk\r\nKim,kim@cam.ac.uk\r\n'
    const csvJob = await finishedUkJob(csv, "text/csv; charset=utf-8")
    expect(csvJob.counts).toMatchObject({ valid: 2, invalid: 0 })
    const asCsv = await fetch(`${daemon.url}/api/v1/jobs/${csvJob.jobId}/results`, {
      headers: { authorization: `Bearer ${acme}`, accept: "text/csv" }
    })
    expect(asCsv.headers.get("content-type")).toMatch(/^text\/csv/)
    const csvLines = (await asCsv.text()).trim().split("\r\n")
    expect(csvLines[0]!.startsWith("email,isValid,")).toBe(true)
    expect(csvLines.slice(1).map((line) => line.split(",")[0])).toEqual(["jane@ox.ac.uk", "kim@cam.ac.uk"])
  })

  it("keeps every input column in the results, after the verdict, and names the row a duplicate repeats", async () => {
    const csv =
      "\uFEFFcustomerId;Email;plan\r\nc-41;jane@ox.ac.uk;gold\r\nc-42;kim@cam.ac.uk;\r\nc-43;Jane+x@OX.ac.uk;silver\r\nc-44;;none\r\n"
    const job = await finishedUkJob(csv, "text/csv")
    expect(job).toMatchObject({
      inputColumns: ["customerId", "plan"],
      counts: { valid: 3, invalid: 1, duplicates: 1, badInput: 1 }
    })
    const results = `/api/v1/jobs/${job.jobId}/results`
    const page = await call(daemon, "GET", results, { key: acme })
    expect(page.body.data).toEqual([
      expect.objectContaining({ email: "jane@ox.ac.uk", isValid: true, columns: { customerId: "c-41", plan: "gold" } }),
      expect.objectContaining({ email: "kim@cam.ac.uk", columns: { customerId: "c-42", plan: "" } }),
      expect.objectContaining({
        email: "Jane+x@OX.ac.uk",
        duplicateOf: 1,
        columns: { customerId: "c-43", plan: "silver" }
      }),
      expect.objectContaining({
        isValid: false,
        reasonCode: "INVALID_EMAIL_FORMAT",
        columns: { customerId: "c-44", plan: "none" }
      })
    ])
    const csvText = await (
      await fetch(`${daemon.url}${results}`, { headers: { authorization: `Bearer ${acme}`, accept: "text/csv" } })
    ).text()
    const [header, ...lines] = csvText.trim().split("\r\n")
    expect(header).toBe(
      "email,isValid,reasonCode,reason,matchedDomain,institutionId,institutionName,country,matchedTargetGroups,duplicateOf,customerId,plan"
    )
    expect(lines[2]!.startsWith("Jane+x@OX.ac.uk,true,")).toBe(true)
    expect(lines[2]!.endsWith(",1,c-43,silver")).toBe(true)
    // ?format= gives the same file to a plain link (no Accept), as a download named after the job.
    for (const [format, type] of [
      ["csv", "text/csv; charset=utf-8"],
      ["ndjson", "application/x-ndjson"]
    ] as const) {
      const download = await fetch(`${daemon.url}${results}?format=${format}`, {
        headers: { authorization: `Bearer ${acme}`, accept: "text/html,*/*" }
      })
      expect(download.headers.get("content-type")).toBe(type)
      expect(download.headers.get("content-disposition")).toBe(`attachment; filename="${job.jobId}-results.${format}"`)
      const text = await download.text()
      if (format === "csv") expect(text).toBe(csvText)
      else
        expect(
          text
            .trim()
            .split("\n")
            .map((line) => JSON.parse(line).email)
        ).toEqual(page.body.data.map((row: { email: string }) => row.email))
    }
    // NDJSON objects: the other fields, in first-seen order.
    const ndjsonJob = await finishedUkJob(
      ndjson(['{"email":"jane@ox.ac.uk","customerId":"c-1"}', '{"tier":2,"email":"kim@cam.ac.uk"}']),
      "application/x-ndjson"
    )
    expect(ndjsonJob.inputColumns).toEqual(["customerId", "tier"])
    const rows = (await call(daemon, "GET", `/api/v1/jobs/${ndjsonJob.jobId}/results`, { key: acme })).body.data
    expect(rows.map((row: { columns: unknown }) => row.columns)).toEqual([
      { customerId: "c-1", tier: null },
      { customerId: null, tier: 2 }
    ])
  })

  it("streams results many read buffers long, byte for byte, to a client that stops reading and starts again", async () => {
    // Rows of ~8 KB each (the input's other columns are echoed): ~16 MB, more than the kernel takes while the client does not read.
    const note = "x".repeat(8000)
    const emails = Array.from({ length: 2000 }, (_, i) => `s${i}@ox.ac.uk`)
    const job = await finishedUkJob(
      ndjson(emails.map((email, i) => JSON.stringify({ email, note: `${i}${note}` }))),
      "application/x-ndjson"
    )
    const slowly = await new Promise<string>((resolve, reject) => {
      const chunks: Array<Buffer> = []
      request(
        `${daemon.url}/api/v1/jobs/${job.jobId}/results`,
        { headers: { authorization: `Bearer ${acme}`, accept: "application/x-ndjson", "accept-encoding": "identity" } },
        (response: IncomingMessage) => {
          response.on("data", (chunk: Buffer) => {
            chunks.push(chunk)
            response.pause()
            setTimeout(() => response.resume(), chunks.length === 1 ? 300 : 2)
          })
          response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
          response.on("error", reject)
        }
      )
        .on("error", reject)
        .end()
    })
    const rows = slowly
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { email: string; columns: { note: string } })
    expect(rows.map((row) => row.email)).toEqual(emails)
    expect(rows.every((row, i) => row.columns.note === `${i}${note}`)).toBe(true)
  }, 30_000)

  it("compresses downloads when the client accepts it", async () => {
    const submitted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
      key: acme,
      body: { emails: Array.from({ length: 500 }, (_, i) => `s${i}@ox.ac.uk`), targetGroupId: "uk-students" }
    })
    const job = await waitForJob(daemon, acme, submitted.body.jobId)
    const download = (accept: string, encoding: string) =>
      fetch(`${daemon.url}/api/v1/jobs/${job.jobId}/results`, {
        headers: { authorization: `Bearer ${acme}`, accept, "accept-encoding": encoding }
      })
    const plain = await download("application/x-ndjson", "identity")
    expect(plain.headers.get("content-encoding")).toBeNull()
    const plainText = await plain.text()
    for (const [accept, encoding] of [
      ["application/x-ndjson", "gzip"],
      ["application/x-ndjson", "br, gzip"],
      ["text/csv", "gzip"]
    ] as const) {
      const compressed = await download(accept, encoding)
      expect(compressed.headers.get("content-encoding")).toBe(encoding.split(",")[0])
      expect(compressed.headers.get("vary")).toBe("accept-encoding")
      // fetch decodes what it is sent.
      const text = await compressed.text()
      if (accept === "application/x-ndjson") expect(text).toBe(plainText)
      else expect(text.split("\r\n")).toHaveLength(502)
    }
  })

  it("lists the team's jobs newest first, paged, filtered by status", async () => {
    const submitted: Array<string> = []
    for (let i = 0; i < 3; i++) {
      const accepted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
        key: globex,
        body: { emails: [`list${i}@ox.ac.uk`], targetGroupId: "uk-students" }
      })
      submitted.push(accepted.body.jobId)
      await waitForJob(daemon, globex, accepted.body.jobId)
    }
    const first = await call(daemon, "GET", "/api/v1/jobs?limit=2", { key: globex })
    expect(first.status).toBe(200)
    const second = await call(daemon, "GET", `/api/v1/jobs?limit=2&cursor=${first.body.nextCursor}`, { key: globex })
    const listed = [...first.body.data, ...second.body.data].map((job: { jobId: string }) => job.jobId)
    expect(listed.slice(0, 3)).toEqual([...submitted].reverse())
    expect(first.body.data[0]).toMatchObject({ status: "completed", links: { self: `/api/v1/jobs/${submitted[2]}` } })
    // Another team sees none of them; a status filter keeps only that status.
    const acmeJobs = (await call(daemon, "GET", "/api/v1/jobs?limit=100", { key: acme })).body.data
    expect(acmeJobs.map((job: { jobId: string }) => job.jobId)).not.toContain(submitted[0])
    expect((await call(daemon, "GET", "/api/v1/jobs?status=running", { key: globex })).body.data).toEqual([])
    const bad = await call(daemon, "GET", "/api/v1/jobs?cursor=bm9wZQ", { key: globex })
    expect(bad).toMatchObject({ status: 400, body: { errors: [{ field: "/query/cursor" }] } })
    const badStatus = await call(daemon, "GET", "/api/v1/jobs?status=done", { key: globex })
    expect(badStatus.status).toBe(400)
  })

  it("answers the same job for a repeated Idempotency-Key, and 409 for the same key with another body", async () => {
    const headers = { "idempotency-key": "order-2026-11-21" }
    const body = { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" }
    const first = await call(daemon, "POST", "/api/v1/validate/bulk-async", { key: acme, body, headers })
    const again = await call(daemon, "POST", "/api/v1/validate/bulk-async", { key: acme, body, headers })
    expect(first.status).toBe(202)
    expect(again.status).toBe(202)
    expect(again.body.jobId).toBe(first.body.jobId)
    const other = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
      key: acme,
      body: { ...body, emails: ["bob@mit.edu"] },
      headers
    })
    expect(other).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
    // Idempotency keys are per team: another team using the same one gets its own job.
    const elsewhere = await call(daemon, "POST", "/api/v1/validate/bulk-async", { key: globex, body, headers })
    expect(elsewhere.status).toBe(202)
    expect(elsewhere.body.jobId).not.toBe(first.body.jobId)
  })

  it("keeps a job to its team, and checks scopes", async () => {
    const accepted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
      key: acme,
      body: { emails: ["jane@ox.ac.uk"], offerId: "acme-student-discount" }
    })
    expect(accepted.status).toBe(202)
    const { jobId } = accepted.body
    expect((await call(daemon, "GET", `/api/v1/jobs/${jobId}`, { key: globex })).status).toBe(404)
    expect((await call(daemon, "GET", `/api/v1/jobs/${jobId}/results`, { key: globex })).status).toBe(404)
    expect((await call(daemon, "DELETE", `/api/v1/jobs/${jobId}`, { key: globex })).status).toBe(404)
    expect((await call(daemon, "GET", `/api/v1/jobs/${jobId}`, { key: reader })).status).toBe(200)
    const submit = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
      key: reader,
      body: { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" }
    })
    expect(submit).toMatchObject({ status: 403, body: { code: "INSUFFICIENT_SCOPE", requiredScope: "validate:bulk" } })
    const offerJob = await waitForJob(daemon, acme, jobId)
    expect(offerJob).toMatchObject({ status: "completed", target: { offerId: "acme-student-discount" } })
  })

  it("refuses bad submissions with field errors", async () => {
    const submit = (options: Parameters<typeof call>[3], query = "") =>
      call(daemon, "POST", `/api/v1/validate/bulk-async${query}`, { key: acme, ...options })
    const neither = await submit({ body: { emails: ["jane@ox.ac.uk"] } })
    expect(neither).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } })
    const both = await submit({
      rawBody: ndjson(['"a@ox.ac.uk"']),
      headers: { "content-type": "application/x-ndjson" }
    })
    expect(both.status).toBe(400)
    const tooMany = await submit({
      body: { emails: Array.from({ length: 5001 }, (_, i) => `s${i}@ox.ac.uk`), targetGroupId: "uk-students" }
    })
    expect(tooMany).toMatchObject({ status: 400, body: { errors: [{ field: "/emails" }] } })
    const malformed = await submit({ rawBody: "{", headers: { "content-type": "application/json" } })
    expect(malformed).toMatchObject({ status: 400, body: { code: "MALFORMED_JSON" } })
    const noColumn = await submit(
      { rawBody: "name\nJane\n", headers: { "content-type": "text/csv" } },
      "?targetGroupId=uk-students"
    )
    expect(noColumn).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } })
    const badCallback = await submit(
      { rawBody: ndjson(['"a@ox.ac.uk"']), headers: { "content-type": "application/x-ndjson" } },
      "?targetGroupId=uk-students&callbackUrl=ftp%3A%2F%2Fexample.com%2Fhook"
    )
    expect(badCallback).toMatchObject({ status: 400, body: { code: "VALIDATION_ERROR" } })
    expect(badCallback.body.errors[0].field).toBe("/query/callbackUrl")
    const unknownGroup = await submit({ body: { emails: ["jane@ox.ac.uk"], targetGroupId: "nope" } })
    expect(unknownGroup).toMatchObject({ status: 404, body: { code: "NOT_FOUND" } })
    const xml = await submit({ rawBody: "<emails/>", headers: { "content-type": "application/xml" } })
    expect(xml).toMatchObject({ status: 415, body: { code: "UNSUPPORTED_MEDIA_TYPE" } })
    expect(xml.body.detail).toBe(
      "This endpoint takes application/x-ndjson, text/csv, application/json, application/gzip, application/x-gzip; the request was sent as application/xml."
    )
    // No refused upload is left behind in the data directory.
    const leftovers = readdirSync(join(daemon.dataDir, "jobs")).filter((name) => name.startsWith(".upload-"))
    expect(leftovers).toEqual([])
  })

  it("deletes a finished job with its results, and 404s after", async () => {
    const accepted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
      key: acme,
      body: { emails: ["jane@ox.ac.uk"], targetGroupId: "uk-students" }
    })
    const job = await waitForJob(daemon, acme, accepted.body.jobId)
    const deleted = await call(daemon, "DELETE", `/api/v1/jobs/${job.jobId}`, { key: acme })
    expect(deleted).toMatchObject({ status: 200, body: { jobId: job.jobId, status: "completed", deleted: true } })
    expect((await call(daemon, "GET", `/api/v1/jobs/${job.jobId}`, { key: acme })).status).toBe(404)
    expect((await call(daemon, "GET", `/api/v1/jobs/${job.jobId}/results`, { key: acme })).status).toBe(404)
  })

  it("POSTs a signed summary without addresses to the callback URL, retrying after a failure", async () => {
    const received: Array<{ body: string; signature: string | undefined }> = []
    let calls = 0
    const receiver = createServer((request: IncomingMessage, response) => {
      let body = ""
      request.on("data", (chunk) => {
        body += chunk
      })
      request.on("end", () => {
        calls++
        if (calls === 1) {
          response.writeHead(500).end()
          return
        }
        received.push({ body, signature: request.headers["campusgate-signature"] as string | undefined })
        response.writeHead(204).end()
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
    const callbackUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/jobs`
    try {
      const accepted = await call(daemon, "POST", "/api/v1/validate/bulk-async", {
        key: acme,
        body: { emails: ["jane@ox.ac.uk", "secret.person@gmail.com"], targetGroupId: "uk-students", callbackUrl }
      })
      expect(accepted.status).toBe(202)
      const job = await waitForJob(
        daemon,
        acme,
        accepted.body.jobId,
        (candidate) => candidate.callback?.delivered === true
      )
      expect(job.callback.attempts.length).toBe(2)
      expect(job.callback.attempts[0]).toEqual({ at: expect.any(String), delivered: false, reason: "http" })
      expect(job.callback.attempts[1]).toEqual({ at: expect.any(String), delivered: true })
      expect(received).toHaveLength(1)
      const { body, signature } = received[0]!
      expect(verifyCallback(webhookSecret, signature ?? "", body, { toleranceSeconds: 300, now: Date.now() })).toBe(
        true
      )
      expect(verifyCallback("another secret", signature ?? "", body, { toleranceSeconds: 300, now: Date.now() })).toBe(
        false
      )
      expect(JSON.parse(body)).toMatchObject({ jobId: job.jobId, status: "completed", counts: { valid: 1 } })
      expect(body).not.toContain("@")
    } finally {
      receiver.close()
    }
  }, 30_000)

  it("answers 429 with Retry-After to a key with as many uploads in progress as allowed, and takes the next after", async () => {
    const dirs = copyConfig()
    setSettings(dirs, [
      [["limits", "jobUploadsPerKey"], 1],
      [["rateLimits", "bulk", "requests"], 1000],
      [["rateLimits", "jobs", "requests"], 1000]
    ])
    const key = makeKey(dirs, "acme", ["validate:bulk", "jobs:read"])
    const other = makeKey(dirs, "acme", ["validate:bulk", "jobs:read"])
    const limited = await startDaemon(dirs)
    try {
      // An upload that stays open: a chunked body whose end comes later.
      const slow = request(`${limited.url}/api/v1/validate/bulk-async?targetGroupId=uk-students`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/x-ndjson" }
      })
      const answered = new Promise<IncomingMessage>((resolve) => slow.once("response", resolve))
      slow.write('"a@ox.ac.uk"\n')
      await new Promise((resolve) => setTimeout(resolve, 300))
      const submit = (apiKey: string) =>
        call(limited, "POST", "/api/v1/validate/bulk-async?targetGroupId=uk-students", {
          key: apiKey,
          rawBody: ndjson(['"b@ox.ac.uk"']),
          headers: { "content-type": "application/x-ndjson" }
        })
      const refused = await submit(key)
      expect(refused).toMatchObject({ status: 429, body: { code: "RATE_LIMIT_EXCEEDED" } })
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0)
      expect((await submit(other)).status).toBe(202)
      slow.end('"c@ox.ac.uk"\n')
      expect((await answered).statusCode).toBe(202)
      expect((await submit(key)).status).toBe(202)
    } finally {
      await limited.stop()
    }
  }, 60_000)

  it("answers the same rows with jobs evaluated on the request thread (jobs.workerThreads: 0) as on job threads", async () => {
    const dirs = copyConfig()
    setSettings(dirs, [
      [["jobs", "workerThreads"], 0],
      [["rateLimits", "bulk", "requests"], 1000]
    ])
    const key = makeKey(dirs, "acme", ["validate:bulk", "jobs:read"])
    const inline = await startDaemon(dirs)
    try {
      const hosts = ["ox.ac.uk", "mit.edu", "tum.de", "gmail.com", "newcollege.edu", "mailinator.com"]
      const lines = Array.from({ length: 5000 }, (_, i) =>
        i % 97 === 0 ? "[1,2]" : JSON.stringify(`User${i % 1800}@${hosts[i % hosts.length]}`)
      )
      const results = async (on: Daemon, apiKey: string, target: string) => {
        const accepted = await call(on, "POST", `/api/v1/validate/bulk-async?${target}`, {
          key: apiKey,
          rawBody: ndjson(lines),
          headers: { "content-type": "application/x-ndjson" }
        })
        expect(accepted.status).toBe(202)
        const job = await waitForJob(on, apiKey, accepted.body.jobId)
        const download = await fetch(`${on.url}/api/v1/jobs/${job.jobId}/results`, {
          headers: { authorization: `Bearer ${apiKey}`, accept: "application/x-ndjson" }
        })
        return { counts: job.counts, text: await download.text() }
      }
      for (const target of ["targetGroupId=uk-students", "offerId=acme-student-discount"]) {
        const threaded = await results(daemon, acme, target)
        const here = await results(inline, key, target)
        expect(here.text).toBe(threaded.text)
        expect(here.counts).toEqual(threaded.counts)
        expect(threaded.counts).toMatchObject({ badInput: 52, duplicates: expect.any(Number) })
        expect(threaded.counts.duplicates).toBeGreaterThan(3000)
      }
    } finally {
      await inline.stop()
    }
  }, 60_000)
})

describe("job threads by default", () => {
  it("are one per core but the request thread's, at least one", () => {
    expect([1, 2, 4, 8].map((cores) => defaultJobThreads(cores))).toEqual([1, 1, 3, 7])
  })
})
