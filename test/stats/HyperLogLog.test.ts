import { describe, expect, it } from "@effect/vitest"
import { hashCanonicalAddress, hashKeyFromBytes, lastHash } from "../../src/engine/email/canonicalHash.ts"
import { addHash, estimate, makeRegisters, mergeRegisters } from "../../src/stats/HyperLogLog.ts"

const key = hashKeyFromBytes(new Uint8Array(16).map((_, i) => 200 - i))

const addEmails = (registers: Uint8Array, from: number, to: number): void => {
  for (let i = from; i < to; i++) {
    hashCanonicalAddress(key, `student${i}@uni${i % 97}.edu`)
    addHash(registers, lastHash.high, lastHash.low)
  }
}

describe("HyperLogLog over the keyed email hash", () => {
  it("counts a few dozen exactly, a few hundred within 2%, and repeats not at all", () => {
    expect(estimate(null)).toBe(0)
    for (const n of [1, 2, 10, 50, 100, 500]) {
      const registers = makeRegisters()
      addEmails(registers, 0, n)
      addEmails(registers, 0, n)
      if (n <= 50) expect(estimate(registers)).toBe(n)
      else expect(Math.abs(estimate(registers) / n - 1)).toBeLessThan(0.02)
    }
  })

  it("stays within 4 standard errors (3.2%) from 2,000 to 1,000,000 distinct emails", () => {
    const registers = makeRegisters()
    let added = 0
    for (const n of [2_000, 20_000, 60_000, 200_000, 1_000_000]) {
      addEmails(registers, added, n)
      added = n
      expect(Math.abs(estimate(registers) / n - 1)).toBeLessThan(0.032)
    }
  })

  it("merges by maximum: the union of two halves counts like the whole", () => {
    const left = makeRegisters()
    const right = makeRegisters()
    const whole = makeRegisters()
    addEmails(left, 0, 30_000)
    addEmails(right, 20_000, 50_000)
    addEmails(whole, 0, 50_000)
    mergeRegisters(left, right)
    expect(left).toEqual(whole)
  })
})
