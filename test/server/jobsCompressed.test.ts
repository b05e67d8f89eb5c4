/**
 * Compressed job uploads end to end on the real daemon: a CSV sent with
 * `Content-Encoding` gzip, br and zstd answers the rows the plain upload
 * answers; gzip files as `application/gzip` (CSV, NDJSON, a JSON document);
 * Idempotency-Key over the content; a bomb, a body past the size limit
 * once decompressed, a corrupt stream and an unknown coding refused with
 * nothing kept; the key's upload limit and the early job threads.
 */
import { createHash } from "node:crypto"
import { once } from "node:events"
import { readdirSync, readFileSync } from "node:fs"
import { type IncomingHttpHeaders, request } from "node:http"
import { join } from "node:path"
import { brotliCompressSync, gzipSync, zstdCompressSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { MAX_COMPRESSION_RATIO } from "../../src/jobs/uploadCoding.ts"
import { call, type Daemon, makeKey, setSettings, sharedDaemon, waitForJob } from "./daemon.ts"

const BULK_ASYNC = "/api/v1/validate/bulk-async"
const LIMIT_BYTES = 4 * 1024 * 1024

/** A CSV as a spreadsheet exports it: a BOM, `;` between fields, other columns, a duplicate, bad rows. */
const csv = (rows: number): string => {
  const hosts = ["ox.ac.uk", "cam.ac.uk", "mit.edu", "gmail.com", "tum.de", "mailinator.com"]
  const lines = Array.from({ length: rows }, (_, i) => {
    const local = createHash("sha256").update(String(i)).digest("hex").slice(0, 8)
    return `c-${i};${local}@${hosts[i % hosts.length]};${i % 3 === 0 ? "gold" : ""}`
  })
  lines.push("c-dup;Jane@OX.ac.uk;", "c-dup2;jane@ox.ac.uk;x", "c-bad;not an email;", "c-empty;;")
  return `\uFEFFcustomerId;Email;plan\r\n${lines.join("\r\n")}\r\n`
}

/** The bytes of a job's results as NDJSON, each row parsed. */
const rowsOf = async (daemon: Daemon, key: string, jobId: string) => {
  const response = await fetch(`${daemon.url}/api/v1/jobs/${jobId}/results`, {
    headers: { authorization: `Bearer ${key}`, accept: "application/x-ndjson" }
  })
  return (await response.text())
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))
}

/** Submits a body and, once accepted, waits for the job: its record and rows. */
const runJob = async (
  daemon: Daemon,
  key: string,
  query: string,
  body: Uint8Array,
  headers: Record<string, string>
) => {
  const accepted = await call(daemon, "POST", `${BULK_ASYNC}${query}`, { key, rawBody: body, headers })
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(202)
  const job = await waitForJob(daemon, key, accepted.body.jobId)
  return { job, rows: await rowsOf(daemon, key, job.jobId) }
}

/**
 * Streams `chunks` as a request body (chunked, as they come, waiting for the
 * socket to drain) and resolves with the answer, which may come before the
 * whole body is sent; `hold` keeps the body open until it resolves.
 */
const streamUpload = (
  daemon: Daemon,
  path: string,
  headers: Record<string, string>,
  chunks: Iterable<Uint8Array>,
  hold?: Promise<unknown>
) =>
  new Promise<{ status: number; headers: IncomingHttpHeaders; body: Record<string, unknown> }>((resolve, reject) => {
    let answered = false
    const sent = request(`${daemon.url}${path}`, { method: "POST", headers })
    const response = new Promise<void>((responded) =>
      sent.once("response", (answer) => {
        answered = true
        responded()
        let text = ""
        answer.on("data", (chunk) => {
          text += String(chunk)
        })
        answer.on("end", () => resolve({ status: answer.statusCode!, headers: answer.headers, body: JSON.parse(text) }))
      })
    )
    // The server may stop reading once it has answered: the rest of the body has nowhere to go.
    sent.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE" && error.code !== "ECONNRESET") reject(error)
    })
    void (async () => {
      for (const chunk of chunks) {
        if (answered) return
        if (!sent.write(chunk)) await Promise.race([once(sent, "drain"), response])
        if (hold !== undefined) await hold
      }
      if (!answered) sent.end()
    })()
  })

/** The daemon's peak resident memory so far, in bytes (Linux). */
const peakMemory = (daemon: Daemon): number => {
  const status = readFileSync(`/proc/${daemon.process.pid}/status`, "utf8")
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024
}

/** Job threads the daemon runs now (Linux: its threads named `WorkerThread`). */
const workerThreads = (daemon: Daemon): number =>
  readdirSync(`/proc/${daemon.process.pid}/task`).filter((task) => {
    try {
      return readFileSync(`/proc/${daemon.process.pid}/task/${task}/comm`, "utf8").trim() === "WorkerThread"
    } catch {
      return false
    }
  }).length

/** What a refused upload must not leave: a staged upload in the data directory, or a job. */
const leftovers = async (daemon: Daemon, key: string) => ({
  staged: readdirSync(join(daemon.dataDir, "jobs")).filter((name) => name.startsWith(".upload-")),
  jobs: (await call(daemon, "GET", "/api/v1/jobs?limit=100", { key })).body.data.length as number
})

const validations = async (daemon: Daemon, key: string) =>
  (await call(daemon, "GET", "/api/v1/offers/acme-student-discount/status", { key })).body.usage.validations as number

describe("compressed job uploads", () => {
  let acme: string
  const daemon = sharedDaemon((dirs) => {
    setSettings(dirs, [
      [["limits", "jobMaxEmails"], 50_000],
      [["rateLimits", "jobs", "requests"], 1000]
    ])
    acme = makeKey(dirs, "acme", ["validate:bulk", "jobs:read", "offers:read"])
  })

  it("answers a CSV sent with Content-Encoding gzip, br or zstd (any case) with the rows of the same CSV sent plain", async () => {
    const plain = Buffer.from(csv(3000))
    const query = "?offerId=acme-student-discount"
    const expected = await runJob(daemon, acme, query, plain, { "content-type": "text/csv" })
    expect(expected.job).toMatchObject({
      inputColumns: ["customerId", "plan"],
      counts: { duplicates: 1, badInput: 1 },
      progress: { total: 3004 }
    })
    for (const [coding, compressed] of [
      ["gzip", gzipSync(plain)],
      ["BR", brotliCompressSync(plain)],
      ["zstd", zstdCompressSync(plain)],
      ["identity", plain]
    ] as const) {
      const got = await runJob(daemon, acme, query, compressed, {
        "content-type": "text/csv",
        "content-encoding": coding
      })
      expect(got.job.counts, coding).toEqual(expected.job.counts)
      expect(got.job.inputColumns).toEqual(expected.job.inputColumns)
      expect(got.rows, coding).toEqual(expected.rows)
    }
  }, 60_000)

  it("takes a gzip file as application/gzip: CSV or NDJSON told from its first line, or named by format; a JSON document", async () => {
    const plainCsv = Buffer.from(csv(200))
    const query = "?targetGroupId=uk-students"
    const expected = await runJob(daemon, acme, query, plainCsv, { "content-type": "text/csv" })
    const fromFile = await runJob(daemon, acme, query, gzipSync(plainCsv), { "content-type": "application/gzip" })
    expect(fromFile.rows).toEqual(expected.rows)
    const named = await runJob(daemon, acme, `${query}&format=csv`, gzipSync(plainCsv), {
      "content-type": "application/x-gzip"
    })
    expect(named.rows).toEqual(expected.rows)

    const ndjson = Buffer.from('"jane@ox.ac.uk"\n{"email":"kim@cam.ac.uk","customerId":"c-2"}\n42\n')
    const plainNdjson = await runJob(daemon, acme, query, ndjson, { "content-type": "application/x-ndjson" })
    expect(plainNdjson.job.counts).toMatchObject({ valid: 2, badInput: 1 })
    for (const format of ["", "&format=ndjson"]) {
      const got = await runJob(daemon, acme, `${query}${format}`, gzipSync(ndjson), {
        "content-type": "application/gzip"
      })
      expect(got.rows).toEqual(plainNdjson.rows)
    }
    // A gzip file sent with a Content-Encoding as well: both undone.
    const twice = await runJob(daemon, acme, query, brotliCompressSync(gzipSync(ndjson)), {
      "content-type": "application/gzip",
      "content-encoding": "br"
    })
    expect(twice.rows).toEqual(plainNdjson.rows)

    // No target in the query: a JSON document, which names its own.
    const document = Buffer.from(
      JSON.stringify({ emails: ["jane@ox.ac.uk", "bob@mit.edu"], targetGroupId: "uk-students" })
    )
    const fromDocument = await runJob(daemon, acme, "", gzipSync(document), { "content-type": "application/gzip" })
    expect(fromDocument.rows.map((row) => row.email)).toEqual(["jane@ox.ac.uk", "bob@mit.edu"])
    const encodedDocument = await runJob(daemon, acme, "", zstdCompressSync(document), {
      "content-type": "application/json",
      "content-encoding": "zstd"
    })
    expect(encodedDocument.rows).toEqual(fromDocument.rows)

    const contradicted = await call(daemon, "POST", `${BULK_ASYNC}${query}&format=ndjson`, {
      key: acme,
      rawBody: plainCsv,
      headers: { "content-type": "text/csv" }
    })
    expect(contradicted).toMatchObject({
      status: 400,
      body: { code: "VALIDATION_ERROR", errors: [{ field: "/query/format", code: "CONFLICTS_WITH_CONTENT_TYPE" }] }
    })
  }, 60_000)

  it("answers the same job for an Idempotency-Key whether the batch comes plain or compressed, 409 for another batch", async () => {
    const headers = { "content-type": "text/csv", "idempotency-key": "import-compressed" }
    const plain = Buffer.from(csv(50))
    const submit = (body: Uint8Array, more: Record<string, string>) =>
      call(daemon, "POST", `${BULK_ASYNC}?targetGroupId=uk-students`, {
        key: acme,
        rawBody: body,
        headers: { ...headers, ...more }
      })
    const first = await submit(gzipSync(plain), { "content-encoding": "gzip" })
    expect(first.status).toBe(202)
    const again = await submit(zstdCompressSync(plain), { "content-encoding": "zstd" })
    expect(again).toMatchObject({ status: 202, body: { jobId: first.body.jobId } })
    expect((await submit(plain, {})).body.jobId).toBe(first.body.jobId)
    const other = await submit(gzipSync(Buffer.from(csv(51))), { "content-encoding": "gzip" })
    expect(other).toMatchObject({ status: 409, body: { code: "CONFLICT" } })
  })

  it("refuses a bomb with 413 as it streams in, without the daemon's memory growing, and keeps nothing", async () => {
    const before = await leftovers(daemon, acme)
    const peak = peakMemory(daemon)
    // 64 gzip members of 16 MiB of newlines each: about 1 MB that inflates to 1 GiB of blank NDJSON lines,
    // which the reader skips: only the limits stop it.
    const member = gzipSync(Buffer.alloc(16 << 20, 10), { level: 9 })
    const answer = await streamUpload(
      daemon,
      `${BULK_ASYNC}?targetGroupId=uk-students`,
      { authorization: `Bearer ${acme}`, "content-type": "application/x-ndjson", "content-encoding": "gzip" },
      Array.from({ length: 64 }, () => member)
    )
    expect(answer).toMatchObject({ status: 413, body: { code: "PAYLOAD_TOO_LARGE" } })
    expect(answer.body.detail).toMatch(/^The body inflates more than 100 times .* refused as a decompression bomb/)
    expect(peakMemory(daemon) - peak).toBeLessThan(64 * 1024 * 1024)
    expect(await leftovers(daemon, acme)).toEqual(before)
  }, 60_000)

  it("refuses a corrupt or cut-short stream with 400, and keeps nothing: no job, no staged upload, nothing counted", async () => {
    const before = { ...(await leftovers(daemon, acme)), validations: await validations(daemon, acme) }
    const plain = Buffer.from(csv(500))
    const brotli = brotliCompressSync(plain)
    for (const [coding, body, detail] of [
      [
        "gzip",
        Buffer.concat([gzipSync(plain).subarray(0, 20), Buffer.alloc(64, 7)]),
        /^The body is not a valid gzip stream: /
      ],
      [
        "br",
        brotli.subarray(0, brotli.length - 10),
        /^The body is not a valid br stream: it ends before the compressed stream does/
      ],
      ["gzip", plain, /^The body is not a valid gzip stream: incorrect header check\.$/]
    ] as const) {
      const refused = await call(daemon, "POST", `${BULK_ASYNC}?offerId=acme-student-discount`, {
        key: acme,
        rawBody: body,
        headers: { "content-type": "text/csv", "content-encoding": coding }
      })
      expect(refused).toMatchObject({
        status: 400,
        body: { code: "VALIDATION_ERROR", errors: [{ field: "/body", code: "CORRUPT_ENCODING" }] }
      })
      expect(refused.body.detail).toMatch(detail)
    }
    const after = { ...(await leftovers(daemon, acme)), validations: await validations(daemon, acme) }
    expect(after).toEqual(before)
  })

  it("answers 415 naming the codings it takes, for another Content-Encoding or several", async () => {
    for (const [coding, detail] of [
      ["deflate", 'Content-Encoding "deflate" is not accepted; a job upload takes gzip, br, zstd or identity.'],
      [
        "gzip, br",
        "Content-Encoding names several codings (gzip, br); a job upload takes one of gzip, br, zstd or identity."
      ]
    ] as const) {
      const refused = await call(daemon, "POST", `${BULK_ASYNC}?targetGroupId=uk-students`, {
        key: acme,
        rawBody: gzipSync(Buffer.from("email\r\njane@ox.ac.uk\r\n")),
        headers: { "content-type": "text/csv", "content-encoding": coding }
      })
      expect(refused).toMatchObject({ status: 415, body: { code: "UNSUPPORTED_MEDIA_TYPE", detail } })
      expect(refused.headers.get("accept-encoding")).toBe("gzip, br, zstd")
      expect(refused.body.requestId).toBe(refused.headers.get("x-request-id"))
    }
    const zip = await call(daemon, "POST", `${BULK_ASYNC}?targetGroupId=uk-students`, {
      key: acme,
      rawBody: "PK",
      headers: { "content-type": "application/zip" }
    })
    expect(zip).toMatchObject({ status: 415, body: { code: "UNSUPPORTED_MEDIA_TYPE" } })
    expect(zip.body.detail).toBe(
      "This endpoint takes application/x-ndjson, text/csv, application/json, application/gzip, application/x-gzip; the request was sent as application/zip."
    )
  })

  it("says in the served OpenAPI document what it takes: the gzip file types, Content-Encoding, format, the ratio", async () => {
    const operation = (await call(daemon, "GET", "/openapi.json")).body.paths["/api/v1/validate/bulk-async"].post
    // CSV first: the form the docs page shows (and its snippet sends).
    expect(Object.keys(operation.requestBody.content)).toEqual([
      "text/csv",
      "application/x-ndjson",
      "application/json",
      "application/gzip",
      "application/x-gzip"
    ])
    const parameter = (name: string) =>
      operation.parameters.find((candidate: { name: string }) => candidate.name === name)
    expect(parameter("content-encoding")).toMatchObject({ in: "header", schema: { description: expect.any(String) } })
    expect(parameter("format")).toMatchObject({ in: "query", schema: { enum: ["csv", "ndjson", "json"] } })
    expect(operation.description).toContain(`inflates more than ${MAX_COMPRESSION_RATIO} times is refused (413)`)
  })
})

describe("compressed job uploads on a daemon with tight limits", () => {
  let key: string
  const daemon = sharedDaemon((dirs) => {
    setSettings(dirs, [
      [["limits", "jobUploadsPerKey"], 1],
      [["limits", "jobMaxBodyBytes"], LIMIT_BYTES],
      [["rateLimits", "jobs", "requests"], 1000]
    ])
    key = makeKey(dirs, "acme", ["validate:bulk", "jobs:read"])
  })

  it("starts the job threads while a compressed upload arrives, and holds it to the key's upload limit", async () => {
    const deadline = Date.now() + 10_000
    while (workerThreads(daemon) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(workerThreads(daemon)).toBe(0)
    const body = gzipSync(Buffer.from(csv(2000)))
    let finish = () => {}
    const held = new Promise<void>((resolve) => {
      finish = resolve
    })
    // The first half now, the rest once released: an upload in progress.
    const slow = streamUpload(
      daemon,
      `${BULK_ASYNC}?targetGroupId=uk-students`,
      { authorization: `Bearer ${key}`, "content-type": "text/csv", "content-encoding": "gzip" },
      [body.subarray(0, body.length >> 1), body.subarray(body.length >> 1)],
      held
    )
    while (workerThreads(daemon) === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
    expect(workerThreads(daemon)).toBeGreaterThan(0)
    const refused = await call(daemon, "POST", `${BULK_ASYNC}?targetGroupId=uk-students`, {
      key,
      rawBody: gzipSync(Buffer.from("email\r\njane@ox.ac.uk\r\n")),
      headers: { "content-type": "text/csv", "content-encoding": "gzip" }
    })
    expect(refused).toMatchObject({ status: 429, body: { code: "RATE_LIMIT_EXCEEDED" } })
    finish()
    expect((await slow).status).toBe(202)
  }, 30_000)

  it("refuses a body that decompresses past limits.jobMaxBodyBytes with 413, though it inflates less than the cap", async () => {
    const plain = Buffer.from(csv(200_000))
    const body = gzipSync(plain)
    expect(body.length).toBeLessThan(LIMIT_BYTES)
    expect(plain.length).toBeGreaterThan(LIMIT_BYTES)
    const chunks = Array.from({ length: Math.ceil(body.length / 65536) }, (_, i) =>
      body.subarray(i * 65536, (i + 1) * 65536)
    )
    const answer = await streamUpload(
      daemon,
      `${BULK_ASYNC}?targetGroupId=uk-students`,
      { authorization: `Bearer ${key}`, "content-type": "text/csv", "content-encoding": "gzip" },
      chunks
    )
    expect(answer).toMatchObject({
      status: 413,
      body: {
        code: "PAYLOAD_TOO_LARGE",
        detail: `The body decompresses to more than ${LIMIT_BYTES} bytes, the largest job upload, compressed or not.`
      }
    })
  }, 30_000)
})
