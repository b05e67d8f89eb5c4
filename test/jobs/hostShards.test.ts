import fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { JobTarget } from "../../src/domain/Job.ts"
import { mergeRows, shardOfLine, splitLines } from "../../src/jobs/hostShards.ts"
import type { InputItem } from "../../src/jobs/inputLines.ts"
import { type BatchRequest, type EncodedBatch, encodeBatch } from "../../src/jobs/jobBatches.ts"
import { evaluate, inputText } from "./jobTesting.ts"

const target = { targetGroupId: "edu" } as unknown as JobTarget

const shardOf = (item: InputItem, shards: number) => {
  const line = Buffer.from(inputText([item]))
  return shardOfLine(line, 0, line.length - 1, shards)
}

const requestOf = (items: ReadonlyArray<InputItem>): BatchRequest => ({
  target,
  lines: new Uint8Array(Buffer.from(inputText(items))),
  count: items.length,
  columns: ["customer"]
})

/** The batch encoded split into `shards` parts, each part on its own, and merged back. */
const splitAndMerged = (request: BatchRequest, shards: number) => {
  const owners = new Uint16Array(request.count)
  const into = Array.from({ length: shards }, () => Buffer.allocUnsafe(16))
  const parts = splitLines(request.lines, request.count, owners, into).map((part): EncodedBatch | undefined =>
    part.count === 0
      ? undefined
      : encodeBatch({ ...request, lines: part.lines, count: part.count }, evaluate, undefined)
  )
  const memory = {
    text: Buffer.alloc(64),
    splices: new Uint32Array(request.count),
    hashes: new Float64Array(request.count)
  }
  return { owners, ...mergeRows(owners, request.count, parts, memory) }
}

describe("hostShards", () => {
  it("sends every email of one host to one shard, whatever its case, local part or columns", () => {
    const sameHost: ReadonlyArray<InputItem> = [
      "jane@mit.edu",
      "J.Doe+tag@MIT.EDU",
      "x@Mit.Edu",
      { email: "li@mit.edu", columns: ["c-1", 7] }
    ]
    for (let shards = 2; shards <= 7; shards++) {
      const found = new Set(sameHost.map((item) => shardOf(item, shards)))
      expect(found.size).toBe(1)
    }
  })

  it("spreads hosts evenly over the shards", () => {
    const counts = [0, 0, 0, 0]
    for (let i = 0; i < 4000; i++) counts[shardOf(`a@school-${i}.edu`, 4)]!++
    for (const count of counts) expect(count).toBeGreaterThan(800)
  })

  it("puts the rows of a batch split by host back in input order, as encoded whole", () => {
    const hosts = ["mit.edu", "cs.ox.ac.uk", "tum.de", "gmail.com", "unlisted-school.edu", "agnesscott.edu"]
    const item = fc.oneof(
      fc
        .tuple(fc.stringMatching(/^[a-zA-Z0-9.+_-]{1,12}$/), fc.constantFrom(...hosts), fc.boolean())
        .map(([local, host, upper]): InputItem => `${local}@${upper ? host.toUpperCase() : host}`),
      fc
        .tuple(fc.constantFrom(...hosts), fc.string({ maxLength: 8 }))
        .map(([host, note]): InputItem => ({ email: `x@${host}`, columns: [note] })),
      fc.string({ maxLength: 20 }).map((text): InputItem => text),
      fc.string({ maxLength: 20 }).map((text): InputItem => ({ bad: text, reason: "The row has no email." })),
      fc.constant<InputItem>('"quoted\\"@mit.edu')
    )
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 5 }), (items, shards) => {
        const request = requestOf(items)
        const whole = encodeBatch(request, evaluate, undefined)
        const merged = splitAndMerged(request, shards)
        expect(Buffer.from(merged.text).toString("utf8")).toBe(Buffer.from(whole.text).toString("utf8"))
        expect([...merged.splices]).toEqual([...whole.splices])
        expect([...merged.hashes]).toEqual([...whole.hashes])
        for (const owner of merged.owners) expect(owner).toBeLessThan(shards)
      }),
      { numRuns: 150 }
    )
  })
})
