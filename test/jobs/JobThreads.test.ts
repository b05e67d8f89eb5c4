import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { afterEach, describe, expect, it } from "vitest"
import { LiveSnapshot } from "../../src/app/Snapshot.ts"
import { directorySource } from "../../src/app/sources.ts"
import { type Validated, Validation, ValidationCounters } from "../../src/app/Validation.ts"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import type { JobTarget } from "../../src/domain/Job.ts"
import type { TalliedCounts } from "../../src/domain/OfferUsage.ts"
import { ALL_TEAMS } from "../../src/domain/visibility.ts"
import { SLOT_INPUT_BYTES, SLOTS_PER_THREAD } from "../../src/jobs/batchSlots.ts"
import { duplicatesKey } from "../../src/jobs/duplicates.ts"
import type { InputItem } from "../../src/jobs/inputLines.ts"
import { JobQueue } from "../../src/jobs/JobQueue.ts"
import * as JobQueueLocal from "../../src/jobs/JobQueueLocal.ts"
import { JobStore } from "../../src/jobs/JobStore.ts"
import * as JobStoreMemory from "../../src/jobs/JobStoreMemory.ts"
import { JobThreads } from "../../src/jobs/JobThreads.ts"
import { type BatchRequest, encodeBatch, JobFailure } from "../../src/jobs/jobBatches.ts"
import type { JobUsage } from "../../src/jobs/jobUsage.ts"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { usageTally } from "../../src/stats/UsageRecorder.ts"
import { UsageStatistics } from "../../src/stats/UsageStatistics.ts"
import { fileText, inputText, parseLines, request } from "./jobTesting.ts"

const shippedConfig = join(import.meta.dirname, "../../config")
const usageKey = hashKeyFromSecret("job threads test")
/** Inside acme-winter-semester's window, so every shipped offer answers on its merits. */
const now = Date.parse("2026-12-01T12:00:00Z")

/** A copy of the shipped config (its datasets included), served by a snapshot. */
const shipped = () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-job-threads-"))
  const configDir = join(root, "config")
  cpSync(shippedConfig, configDir, { recursive: true })
  const live = LiveSnapshot.loadSync(directorySource({ configDir, dataDir: join(root, "data"), env: {} }), {
    now: () => now
  })
  if (live instanceof InvalidConfiguration) throw live
  return { live, configDir }
}

const items: ReadonlyArray<InputItem> = [
  "jane@mit.edu",
  "li@cs.ox.ac.uk",
  "max@tum.de",
  "MAX@TUM.DE",
  "someone@gmail.com",
  "trash@mailinator.com",
  "pat@students.unlisted-school.edu",
  "sam@agnesscott.edu",
  "not an email",
  { bad: "a;b;c", reason: "The row has no email." },
  { email: "j.o.h.n+x@googlemail.com", columns: ["c-1", 7] },
  { email: "john@gmail.com", columns: ["c-2", { nested: "ü" }] },
  "anna@lmu.de",
  "x@stud.tu-muenchen.de",
  '"quoted"@mit.edu'
]

const requestFor = (target: { readonly targetGroupId: string } | { readonly offerId: string }): BatchRequest => {
  const lines = new Uint8Array(Buffer.from(inputText(items)))
  return { target: target as JobTarget, lines, count: items.length, columns: ["customer", "rank"] }
}

/** Verdicts as the counters were told them, by kind. */
const collect = () => {
  const counted = new Map<string, number>()
  const add = (result: Validated, times: number) => {
    const key = `${result.isValid}:${result.reasonCode ?? ""}`
    counted.set(key, (counted.get(key) ?? 0) + times)
  }
  const counters = ValidationCounters.of({
    validated: (result) => add(result, 1),
    validatedAll: (results) => {
      for (const result of results) if ("isValid" in result) add(result, 1)
    },
    validatedTimes: add
  })
  return { counted, counters }
}

/** The batch evaluated on this thread, as `evaluateHere` does in the daemon. */
const here = (live: LiveSnapshot, request: BatchRequest) => {
  const { counted, counters } = collect()
  const validation = Validation.make(live, { record: () => undefined, recordMany: () => undefined }, counters)
  const tally = "offerId" in request.target ? usageTally(usageKey, request.target.offerId) : undefined
  // Hashed under the key a daemon evaluating here uses too (`evaluateHere` in server/jobService.ts).
  const batch = encodeBatch(
    request,
    (target, emails, t) => validation.rows(ALL_TEAMS, target, emails, t),
    tally,
    undefined,
    duplicatesKey(usageKey)
  )
  return { batch, usage: tally?.take(), counted }
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")

/** A batch's usage (the counts of each thread that evaluated part of it) as one delta, as the runner's tally adds them. */
const mergedUsage = (target: JobTarget, parts: ReadonlyArray<TalliedCounts> | undefined) => {
  if (parts === undefined || !("offerId" in target)) return undefined
  const tally = usageTally(usageKey, target.offerId)
  for (const counts of parts) tally.addCounts(counts)
  return tally.take()
}

let pools: Array<JobThreads> = []
const pool = (live: LiveSnapshot, options: Partial<ConstructorParameters<typeof JobThreads>[0]> = {}) => {
  const made = new JobThreads({ threads: 2, snapshot: live, usageKey, ...options })
  pools.push(made)
  return made
}
afterEach(async () => {
  await Promise.all(pools.map((made) => made.close()))
  pools = []
})

describe("JobThreads", () => {
  it("evaluates a batch on a thread exactly as on this thread: rows, hashes, counts, usage and metrics", async () => {
    const { live } = shipped()
    const targets: ReadonlyArray<JobTarget> = [
      { targetGroupId: "universities" as never },
      { offerId: "acme-student-discount" as never }
    ]
    for (const target of targets) {
      const expected = here(live, requestFor(target))
      const { counted, counters } = collect()
      const threads = pool(live, { counters })
      const tally = "offerId" in target ? usageTally(usageKey, target.offerId) : undefined
      const batch = await threads.evaluate(requestFor(target), tally)
      expect(text(batch.text)).toBe(text(expected.batch.text))
      expect([...batch.splices]).toEqual([...expected.batch.splices])
      expect([...batch.hashes]).toEqual([...expected.batch.hashes])
      expect([batch.valid, batch.badInput]).toEqual([expected.batch.valid, expected.batch.badInput])
      expect(mergedUsage(target, batch.usage)).toEqual(expected.usage)
      expect(counted).toEqual(expected.counted)
      expect(expected.batch.valid).toBeGreaterThan(0)
      if ("offerId" in target) expect(expected.usage?.usage.validations).toBe(items.length - 1)
    }
  })

  it("judges alike whichever target groups and offers successive batches ask about, each twice", async () => {
    const { live } = shipped()
    const threads = pool(live, { threads: 1 })
    const groups = ["universities", "uk-students", "acme-bavaria", "acme-partners", "globex-campus"]
    // The second round meets hosts the thread has judged for each target (its rows' verdicts, kept by host).
    for (let round = 0; round < 2; round++) {
      for (const targetGroupId of [...groups, "acme-student-discount"]) {
        const target = targetGroupId.includes("discount") ? { offerId: targetGroupId } : { targetGroupId }
        const batch = await threads.evaluate(requestFor(target), undefined)
        expect(text(batch.text)).toBe(text(here(live, requestFor(target)).batch.text))
      }
    }
  })

  it("counts no usage for a run that keeps no tally", async () => {
    const { live } = shipped()
    const batch = await pool(live).evaluate(requestFor({ offerId: "acme-student-discount" }), undefined)
    expect(batch.usage).toBeUndefined()
  })

  it("judges batches taken after a reload by the new configuration", async () => {
    const { live, configDir } = shipped()
    const threads = pool(live, { threads: 1 })
    const target = { targetGroupId: "universities" }
    const first = await threads.evaluate(requestFor(target), undefined)
    const before = text(first.text)
    expect(before).toContain('"email":"jane@mit.edu","isValid":true')
    // Its buffer goes back to the thread, which encodes the next batch into it.
    threads.release(first)
    const file = join(configDir, "target-groups/universities.yaml")
    writeFileSync(file, readFileSync(file, "utf8").replace("types: [university]", "countries: [GB]"))
    expect(Effect.runSync(live.reload())).toMatchObject({ ok: true })
    const after = text((await threads.evaluate(requestFor(target), undefined)).text)
    expect(after).toBe(text(here(live, requestFor(target)).batch.text))
    expect(after).toContain('"email":"jane@mit.edu","isValid":false')
    expect(after).toContain('"email":"li@cs.ox.ac.uk","isValid":true')
  })

  it("encodes batches in memory shared with the thread, each slot used again once its batch is released", async () => {
    const { live } = shipped()
    const threads = pool(live, { threads: 1 })
    const target = { targetGroupId: "universities" }
    const first = await threads.evaluate(requestFor(target), undefined)
    const second = await threads.evaluate(requestFor(target), undefined)
    for (const batch of [first, second]) {
      for (const part of [batch.text, batch.splices, batch.hashes])
        expect(part.buffer).toBeInstanceOf(SharedArrayBuffer)
    }
    expect(second.text.byteOffset).not.toBe(first.text.byteOffset)
    const expected = text(first.text)
    threads.release(first)
    const third = await threads.evaluate(requestFor(target), undefined)
    expect(third.text.byteOffset).toBe(first.text.byteOffset)
    expect(text(third.text)).toBe(expected)
  })

  it("answers batches that find no free slot, or do not fit one, in buffers of their own", async () => {
    const { live } = shipped()
    const threads = pool(live, { threads: 1 })
    const target = { offerId: "acme-student-discount" }
    const expected = text(here(live, requestFor(target)).batch.text)
    // More batches than the thread has slots, none released.
    const many = await Promise.all(
      Array.from({ length: SLOTS_PER_THREAD + 3 }, () => threads.evaluate(requestFor(target), undefined))
    )
    expect(many.filter((batch) => batch.text.buffer instanceof SharedArrayBuffer)).toHaveLength(SLOTS_PER_THREAD)
    for (const batch of many) expect(text(batch.text)).toBe(expected)
    for (const batch of many) threads.release(batch)
    // Lines longer than a slot's room.
    const wide: ReadonlyArray<InputItem> = Array.from({ length: 300 }, (_, i) => ({
      email: `student${i}@mit.edu`,
      columns: [`${"n".repeat(1000)}${i}`]
    }))
    const lines = new Uint8Array(Buffer.from(inputText(wide)))
    expect(lines.length).toBeGreaterThan(SLOT_INPUT_BYTES)
    const request: BatchRequest = { target: target as JobTarget, lines, count: wide.length, columns: ["note"] }
    const answered = await threads.evaluate(request, undefined)
    expect(answered.text.buffer).not.toBeInstanceOf(SharedArrayBuffer)
    expect(text(answered.text)).toBe(text(here(live, request).batch.text))
  })

  it("splits batches by host across two threads alike when slots run out or lines do not fit one", async () => {
    const { live } = shipped()
    const threads = pool(live)
    const target = { offerId: "acme-student-discount" }
    const expected = here(live, requestFor(target))
    const many = await Promise.all(
      Array.from({ length: SLOTS_PER_THREAD + 3 }, () => threads.evaluate(requestFor(target), undefined))
    )
    for (const batch of many) {
      expect(text(batch.text)).toBe(text(expected.batch.text))
      expect([...batch.splices]).toEqual([...expected.batch.splices])
    }
    for (const batch of many) threads.release(batch)
    const wide: ReadonlyArray<InputItem> = Array.from({ length: 600 }, (_, i) => ({
      email: `student${i}@${["mit.edu", "tum.de", "ox.ac.uk", "gmail.com"][i % 4]}`,
      columns: [`${"n".repeat(1000)}${i}`]
    }))
    const lines = new Uint8Array(Buffer.from(inputText(wide)))
    expect(lines.length).toBeGreaterThan(2 * SLOT_INPUT_BYTES)
    const request: BatchRequest = { target: target as JobTarget, lines, count: wide.length, columns: ["note"] }
    const answered = await threads.evaluate(request, undefined)
    const alone = here(live, request).batch
    expect(text(answered.text)).toBe(text(alone.text))
    expect([...answered.hashes]).toEqual([...alone.hashes])
    expect(threads.running).toBe(2)
  })

  it("fails a batch whose target is gone with the reason, as on this thread", async () => {
    const { live } = shipped()
    const failed = pool(live).evaluate(requestFor({ targetGroupId: "gone" }), undefined)
    await expect(failed).rejects.toThrow(JobFailure)
    await expect(failed).rejects.toThrow('There is no target group "gone".')
    expect(() => here(live, requestFor({ targetGroupId: "gone" }))).toThrow('There is no target group "gone".')
  })

  it("stops idle threads and starts them again, with the configuration, for the next batch", async () => {
    const { live } = shipped()
    const threads = pool(live, { idleMs: 200 })
    const target = { offerId: "acme-student-discount" }
    const first = await Promise.all([1, 2, 3].map(() => threads.evaluate(requestFor(target), undefined)))
    expect(threads.running).toBeGreaterThan(0)
    for (let waited = 0; threads.running > 0 && waited < 10_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(threads.running).toBe(0)
    const again = threads.evaluate(requestFor(target), undefined)
    // A batch is split by host across every thread (`hostShards.ts`), which start for it. Counted while it is in
    // flight: once answered, a thread that finished its part first may already have idled out again.
    expect(threads.running).toBe(2)
    expect(text((await again).text)).toBe(text(first[0]!.text))
  })

  it("starts every thread with the configuration when a job is on its way, and stops them if no batch comes", async () => {
    const { live } = shipped()
    const threads = pool(live, { idleMs: 300 })
    threads.prepare()
    expect(threads.running).toBe(2)
    for (let waited = 0; threads.running > 0 && waited < 10_000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(threads.running).toBe(0)
  })

  it("judges the batches of a prepared thread by the configuration in force when each is taken", async () => {
    const { live, configDir } = shipped()
    const threads = pool(live, { threads: 1 })
    const target = { targetGroupId: "universities" }
    threads.prepare()
    const first = text((await threads.evaluate(requestFor(target), undefined)).text)
    expect(first).toBe(text(here(live, requestFor(target)).batch.text))
    threads.prepare()
    const file = join(configDir, "target-groups/universities.yaml")
    writeFileSync(file, readFileSync(file, "utf8").replace("types: [university]", "countries: [GB]"))
    expect(Effect.runSync(live.reload())).toMatchObject({ ok: true })
    const after = text((await threads.evaluate(requestFor(target), undefined)).text)
    expect(after).toContain('"email":"li@cs.ox.ac.uk","isValid":true')
    expect(after).toBe(text(here(live, requestFor(target)).batch.text))
  })

  it("fails the batches still waiting when it is closed, and every batch after", async () => {
    const { live } = shipped()
    const threads = pool(live)
    const waiting = threads.evaluate(requestFor({ targetGroupId: "universities" }), undefined).then(
      () => "answered",
      (error: Error) => error.message
    )
    await threads.close()
    expect(await waiting).toBe("The job threads were stopped.")
    await expect(threads.evaluate(requestFor({ targetGroupId: "universities" }), undefined)).rejects.toThrow(JobFailure)
  })
})

describe("a job on job threads", () => {
  it("sees a reload made mid-job in the chunks after it, and counts its usage once", async () => {
    const { live, configDir } = shipped()
    const threads = pool(live)
    const file = join(configDir, "target-groups/universities.yaml")
    let reloaded = false
    // The reload happens when the first checkpoint is written, while later batches are already in flight.
    const store = Layer.effect(
      JobStore,
      Effect.map(Effect.service(JobStore), (inner) =>
        JobStore.of({
          ...inner,
          write: (job) =>
            Effect.andThen(
              inner.write(job),
              Effect.suspend(() => {
                if (reloaded || job.checkpoint.processed === 0) return Effect.void
                reloaded = true
                writeFileSync(file, readFileSync(file, "utf8").replace("types: [university]", "countries: [GB]"))
                return Effect.asVoid(live.reload())
              })
            )
        })
      )
    ).pipe(Layer.provide(JobStoreMemory.layerMemory))
    const emails = Array.from({ length: 40_000 }, (_, i) => (i % 2 === 0 ? `jane${i}@mit.edu` : `li${i}@cs.ox.ac.uk`))
    const program = Effect.gen(function* () {
      const statistics = yield* UsageStatistics
      const usage: JobUsage = {
        tally: (target) => ("offerId" in target ? statistics.tally(target.offerId) : undefined),
        store: (job) =>
          statistics.applyOnce("acme-student-discount", job.jobId, job.checkpoint.processed, job.checkpoint.usage!),
        forget: () => Effect.void
      }
      const layer = JobQueueLocal.layer({
        concurrency: 1,
        maxQueued: 10,
        retentionHours: 1,
        evaluator: threads,
        chunkItems: 4096,
        usage
      }).pipe(Layer.provideMerge(store))
      return yield* Effect.gen(function* () {
        const queue = yield* JobQueue
        const { job } = yield* queue.submit(
          yield* request(emails, { target: { offerId: "acme-student-discount" as never } })
        )
        const done = yield* queue.awaitFinished("acme", job.jobId)
        const rows = parseLines(yield* fileText(job.jobId, "results"))
        return { done, rows, counted: yield* statistics.usage("acme-student-discount") }
      }).pipe(Effect.provide(layer))
    }).pipe(Effect.provide(UsageStatistics.layerMemory({ secret: "job threads test" })))
    const { done, rows, counted } = await Effect.runPromise(Effect.orDie(program))
    expect(reloaded).toBe(true)
    expect(done.status).toBe("completed")
    expect(rows.map((row) => row.email)).toEqual(emails)
    const mit = rows.filter((row) => row.email.endsWith("@mit.edu")).map((row) => row.isValid)
    // Valid before the reload (a listed university), not after (not in GB); never valid again once not.
    expect(mit.slice(0, 2048)).toEqual(new Array(2048).fill(true))
    expect(mit.slice(-2048)).toEqual(new Array(2048).fill(false))
    expect(mit.indexOf(false)).toBe(mit.lastIndexOf(true) + 1)
    expect(rows.filter((row) => row.email.endsWith("ox.ac.uk")).every((row) => row.isValid)).toBe(true)
    expect(counted).toMatchObject({ validations: 40_000, eligible: done.counts.valid })
  })
})
