import { describe, expect, it } from "vitest"
import { DuplicateSet, hash53 } from "../../src/jobs/duplicates.ts"

describe("duplicates", () => {
  it("are the same canonical address seen earlier in the job", () => {
    const set = new DuplicateSet()
    const seen = ["John@gmail.com", "j.o.h.n+offers@googlemail.com", "john@mit.edu", "JOHN@MIT.EDU", "not an email"]
    expect(seen.map((email) => set.isRepeat(email))).toEqual([false, true, false, true, false])
    expect(set.isRepeat("not an email")).toBe(false)
    expect(set.size).toBe(2)
  })

  it("are tracked as distinct 53-bit integers", () => {
    const hashes = new Set<number>()
    let safe = 0
    for (let i = 0; i < 200_000; i++) {
      const hash = hash53(`user${i}@example${i % 97}.edu`)
      if (Number.isSafeInteger(hash) && hash >= 0) safe++
      hashes.add(hash)
    }
    expect(safe).toBe(200_000)
    expect(hashes.size).toBe(200_000)
    expect(Math.max(...[...hashes].slice(0, 1000))).toBeGreaterThan(2 ** 40)
  })
})
