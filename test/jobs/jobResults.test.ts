import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { type ResultRow, ROW_CSV_COLUMNS } from "../../src/domain/ResultRow.ts"
import { rowCsv } from "../../src/domain/rowCsv.ts"
import { rowText } from "../../src/domain/rowText.ts"
import { CsvReader } from "../../src/jobs/csv.ts"
import { type JobBytes, JobStoreError } from "../../src/jobs/JobStore.ts"
import type { MemoryBytes } from "../../src/jobs/JobStoreMemory.ts"
import { readResultsPage, streamResults } from "../../src/jobs/jobResults.ts"
import { bytesText, textBytes } from "./jobTesting.ts"

const institution = Object.freeze({ id: "ox", name: 'University of Oxford, "Oxon"', country: "GB" })

const awkward: Array<ResultRow> = [
  { email: "plain@ox.ac.uk", isValid: true, matchedDomain: "ox.ac.uk", institution },
  { email: 'quote"d,comma@x.edu', isValid: false, reasonCode: "INVALID_EMAIL_FORMAT", reason: 'has "quotes", commas' },
  { email: "line\nbreak@x.edu", isValid: false, reason: "a\r\nb" },
  { email: " spaced@x.edu ", isValid: true, matchedTargetGroups: ["uk", "eu"] },
  { email: "=cmd@x.edu", isValid: false, reason: "ünïcødé 😀" },
  { email: "", isValid: false }
]

const rowsFile = (rows: ReadonlyArray<ResultRow>) => textBytes(rows.map((row) => `${rowText(row)}\n`).join(""))

/** Opening `bytes` as the store does: a fresh handle each time. */
const opening = (bytes: MemoryBytes) => Effect.sync((): JobBytes => bytes.reopen())

const many = (count: number): Array<ResultRow> =>
  Array.from({ length: count }, (_, i) => ({ ...awkward[i % awkward.length]!, email: `user${i}@x.edu` }))

const collect = (stream: Stream.Stream<Uint8Array, unknown>) =>
  Effect.map(Stream.runCollect(stream), (chunks) => Buffer.concat(chunks).toString("utf8"))

const parseCsv = (text: string): Array<Array<string>> => {
  const records: Array<Array<string>> = []
  const reader = new CsvReader(
    (fields) => records.push(fields),
    () => false
  )
  reader.push(text)
  reader.end()
  return records
}

describe("readResultsPage", () => {
  it.effect("pages cover every row exactly once, in order, whatever the page size", () =>
    Effect.gen(function* () {
      const rows = many(1000)
      const path = rowsFile(rows)
      for (const limit of [1, 7, 100, 999, 1000, 5000]) {
        const seen: Array<ResultRow> = []
        let cursor: string | undefined
        let pages = 0
        do {
          const page = yield* readResultsPage(path, cursor, limit)
          expect(page.data.length).toBeLessThanOrEqual(limit)
          seen.push(...page.data)
          cursor = page.nextCursor ?? undefined
          pages++
        } while (cursor !== undefined)
        expect(seen).toEqual(rows)
        expect(pages).toBe(Math.ceil(rows.length / limit))
      }
    })
  )

  it.effect("rejects a tampered cursor with a typed error", () =>
    Effect.gen(function* () {
      const path = rowsFile(many(10))
      const first = yield* readResultsPage(path, undefined, 3)
      const decoded = Buffer.from(first.nextCursor!, "base64url").toString()
      expect(decoded).toMatch(/^r1:\d+:3$/)
      const [, offset] = decoded.split(":")
      const forged = (text: string) => Buffer.from(text).toString("base64url")
      for (const cursor of [
        "garbage!",
        "",
        forged("r1:-1:0"),
        forged(`r1:${Number(offset) + 1}:3`),
        forged("r1:99999999:5"),
        forged("r1:0:1"),
        forged(`r1:${offset}:${Number(offset) + 1}`),
        "x".repeat(500)
      ]) {
        const error = yield* Effect.flip(readResultsPage(path, cursor, 3))
        expect(error).toMatchObject({ _tag: "JobResultsError", reason: "InvalidCursor" })
      }
      path.close()
      const closed = yield* Effect.flip(readResultsPage(path, undefined, 3))
      expect(closed.reason).toBe("Unreadable")
    })
  )
})

describe("streamResults", () => {
  it.effect("NDJSON is the file as stored", () =>
    Effect.gen(function* () {
      const path = rowsFile(many(5000))
      expect(yield* collect(streamResults(opening(path), "ndjson"))).toBe(bytesText(path))
    })
  )

  it.effect("NDJSON for a consumer that writes each chunk before the next takes turns in a few buffers", () =>
    Effect.gen(function* () {
      const path = rowsFile(many(20_000))
      const copies: Array<Buffer> = []
      const buffers = new Set<ArrayBufferLike>()
      yield* Stream.runForEach(streamResults(opening(path), "ndjson", [], true), (chunk) =>
        Effect.sync(() => {
          copies.push(Buffer.from(chunk))
          buffers.add(chunk.buffer)
        })
      )
      expect(Buffer.concat(copies).toString("utf8")).toBe(bytesText(path))
      expect(copies.length).toBeGreaterThan(4)
      expect(buffers.size).toBeLessThanOrEqual(4)
    })
  )

  it.effect("fails as Unreadable when the results cannot be opened", () =>
    Effect.gen(function* () {
      const gone = Effect.fail(new JobStoreError({ operation: "open", cause: new Error("gone") }))
      const error = yield* Effect.flip(collect(streamResults(gone, "csv")))
      expect(error).toMatchObject({ _tag: "JobResultsError", reason: "Unreadable" })
    })
  )

  it.effect("CSV is the header and one CRLF line per row, in order, across read chunks", () =>
    Effect.gen(function* () {
      const rows = [...awkward, ...many(5000)]
      const csv = yield* collect(streamResults(opening(rowsFile(rows)), "csv"))
      expect(csv).toBe(`${ROW_CSV_COLUMNS.join(",")}\r\n${rows.map((row) => `${rowCsv(row)}\r\n`).join("")}`)
      const records = parseCsv(csv)
      expect(records[0]).toEqual([...ROW_CSV_COLUMNS])
      expect(records.slice(1, 7).map((record) => record[0])).toEqual([
        "plain@ox.ac.uk",
        'quote"d,comma@x.edu',
        "line\nbreak@x.edu",
        " spaced@x.edu ",
        "'=cmd@x.edu",
        ""
      ])
      expect(records[1]![6]).toBe(institution.name)
      expect(records[2]![3]).toBe('has "quotes", commas')
      expect(records[4]![8]).toBe("uk eu")
      expect(records).toHaveLength(rows.length + 1)
    })
  )
})
