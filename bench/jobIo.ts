/**
 * `node bench/jobIo.ts`: bulk-job file I/O on a million items.
 * - upload: `readJobInput` on NDJSON, CSV and JSON bodies in 64 KiB chunks, as an
 *   HTTP body arrives (parse, hash, write and fsync the upload staged in the
 *   file store);
 * - download: `streamResults` of a million result rows (a job's results in
 *   the file store) as NDJSON and CSV.
 * Each is the best of `BENCH_ROUNDS` runs. Prints progress, then one final
 * JSON line. Goal: the NDJSON upload well under 1 s.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type ResultRow, rowText } from "../src/domain/ResultRow.ts"
import { type JobId, newJob } from "../src/jobs/Job.ts"
import { JobStore } from "../src/jobs/JobStore.ts"
import * as JobStoreFiles from "../src/jobs/JobStoreFiles.ts"
import { type JobInputFormat, readJobInput } from "../src/jobs/jobInput.ts"
import { streamResults } from "../src/jobs/jobResults.ts"

const count = Number(process.env.BENCH_EMAILS ?? 1_000_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const dir = mkdtempSync(join(tmpdir(), "campusgate-jobio-"))
/** The file store the daemon uses, in a temporary data directory. */
const inStore = <A, E>(effect: Effect.Effect<A, E, JobStore>): Promise<A> =>
  Effect.runPromise(Effect.provide(effect, JobStoreFiles.layer(dir)))

/**
 * The emails, made where each use needs them and dropped after: held while
 * the timed parts ran, their million strings (and the rows made of them)
 * were traced by every collection of the code measured (a 1M-row CSV
 * upload took 2.6-3.8 s with them live, 1.7-2.3 s without).
 */
const makeEmails = (): Array<string> =>
  Array.from({ length: count }, (_, i) => `student.${i}@dept${i % 97}.university${i % 5000}.edu`)
const chunked = (text: string): Array<Uint8Array> => {
  const bytes = Buffer.from(text)
  const chunks: Array<Uint8Array> = []
  for (let i = 0; i < bytes.length; i += 65536) chunks.push(bytes.subarray(i, i + 65536))
  return chunks
}
const bodies = ((): Record<JobInputFormat, Array<Uint8Array>> => {
  const emails = makeEmails()
  return {
    ndjson: chunked(`${emails.map((email) => JSON.stringify(email)).join("\n")}\n`),
    json: chunked(JSON.stringify({ targetGroupId: "bench", emails })),
    csv: chunked(`name,email\r\n${emails.map((email, i) => `Student ${i},${email}`).join("\r\n")}\r\n`)
  }
})()

const best = async (run: () => Promise<void>): Promise<number> => {
  let fastest = Number.POSITIVE_INFINITY
  for (let round = 0; round < rounds; round++) {
    const start = performance.now()
    await run()
    fastest = Math.min(fastest, performance.now() - start)
  }
  return fastest
}

const upload: Record<string, { ms: number; itemsPerSecond: number; mbPerSecond: number; bytes: number }> = {}
for (const format of ["ndjson", "csv", "json"] as const) {
  const chunks = bodies[format]
  const bytes = chunks.reduce((sum, chunk) => sum + chunk.length, 0)
  const ms = await best(async () => {
    const input = await inStore(
      Effect.gen(function* () {
        const store = yield* JobStore
        const upload = yield* store.stage()
        const read = yield* readJobInput(Stream.fromIterable(chunks), {
          format,
          output: upload.bytes,
          maxEmails: count,
          maxBytes: 2 ** 40
        })
        yield* store.discard(upload)
        return read
      })
    )
    if (input.total !== count) throw new Error(`read ${input.total} items`)
  })
  upload[format] = {
    ms: Math.round(ms),
    itemsPerSecond: Math.round(count / (ms / 1000)),
    mbPerSecond: Math.round(bytes / 1e6 / (ms / 1000)),
    bytes
  }
  console.log(`upload ${format}: ${upload[format]!.ms} ms for ${count} items, ${(bytes / 1e6).toFixed(1)} MB`)
}

/** A million result rows' text, as a job's results file holds them. */
const resultsText = (): Buffer => {
  const institution = Object.freeze({ id: "ox", name: "University of Oxford", country: "GB" })
  const rows: Array<ResultRow> = makeEmails().map((email, i) =>
    i % 3 === 0
      ? {
          email,
          isValid: false,
          reasonCode: "DISPOSABLE_EMAIL",
          reason: "The address is from a disposable email service."
        }
      : { email, isValid: true, matchedDomain: "ox.ac.uk", institution }
  )
  return Buffer.from(rows.map((row) => `${rowText(row)}\n`).join(""))
}
const jobId = `job_${"b".repeat(32)}` as JobId
const openResults = Effect.gen(function* () {
  return yield* (yield* JobStore).open(jobId, "results")
})
await inStore(
  Effect.gen(function* () {
    const store = yield* JobStore
    const created = newJob({
      jobId,
      team: "bench" as never,
      target: { targetGroupId: "bench" as never },
      total: count,
      createdAt: new Date().toISOString()
    })
    yield* store.create(created, yield* store.stage())
    const results = yield* store.open(jobId, "results")
    const text = resultsText()
    results.write(text, 0, text.length, 0)
    results.close()
  })
)

const download: Record<string, { ms: number; rowsPerSecond: number; mbPerSecond: number; bytes: number }> = {}
let heapGrowthMb = 0
for (const format of ["ndjson", "csv"] as const) {
  let bytes = 0
  const heapBefore = process.memoryUsage().heapUsed
  let heapPeak = heapBefore
  const ms = await best(async () => {
    bytes = 0
    await inStore(
      Stream.runForEach(streamResults(openResults, format), (chunk) =>
        Effect.sync(() => {
          bytes += chunk.length
          if ((bytes & 0xfffff) < chunk.length) heapPeak = Math.max(heapPeak, process.memoryUsage().heapUsed)
        })
      )
    )
  })
  heapGrowthMb = Math.max(heapGrowthMb, Math.round((heapPeak - heapBefore) / 1e6))
  download[format] = {
    ms: Math.round(ms),
    rowsPerSecond: Math.round(count / (ms / 1000)),
    mbPerSecond: Math.round(bytes / 1e6 / (ms / 1000)),
    bytes
  }
  console.log(`download ${format}: ${download[format]!.ms} ms for ${count} rows, ${(bytes / 1e6).toFixed(1)} MB`)
}

rmSync(dir, { recursive: true, force: true })
console.log(JSON.stringify({ items: count, rounds, upload, download, downloadHeapGrowthMb: heapGrowthMb }))
