import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { HostNumbers, hashOf } from "../../src/app/HostNumbers.ts"

/** The numbering as a map: hosts numbered in order, all forgotten when `max` are and another comes. */
const referenceNumbers = (max: number) => {
  const numbers = new Map<string, number>()
  let generation = 0
  return {
    find: (host: string) => numbers.get(host) ?? -1,
    add: (host: string) => {
      if (!/^[\0-\x7f]*$/.test(host)) return -1
      if (numbers.size >= max) {
        numbers.clear()
        generation++
      }
      numbers.set(host, numbers.size)
      return numbers.size - 1
    },
    get generation() {
      return generation
    }
  }
}

describe("HostNumbers", () => {
  it("numbers hosts as a map would, through growth and fresh starts, and keeps no host beyond ASCII", () => {
    const host = fc.oneof(
      fc.stringMatching(/^[a-z0-9.-]{0,12}$/),
      fc.stringMatching(/^[ab.]{0,3}$/),
      fc.string({ maxLength: 300 }),
      fc.constantFrom("münchen.de", "xn--mnchen-3ya.de", "")
    )
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3000 }), fc.array(host, { maxLength: 4000 }), (max, hosts) => {
        const numbers = new HostNumbers(max)
        const reference = referenceNumbers(max)
        for (const name of hosts) {
          expect(numbers.find(name)).toBe(reference.find(name))
          // Found in place too, as the domain of an email (`local@name`), whatever comes before it.
          expect(numbers.find(`x.y@${name}`, 4)).toBe(reference.find(name))
          if (reference.find(name) === -1) expect(numbers.add(name)).toBe(reference.add(name))
          expect(numbers.generation).toBe(reference.generation)
        }
      }),
      { numRuns: 60 }
    )
  })

  it("tells apart hosts that share a hash, and finds each of many", () => {
    // Two hosts with one hash: the birthday bound finds a pair among ~2^16 of 2^31 hashes.
    const seen = new Map<number, string>()
    let pair: [string, string] | undefined
    for (let i = 0; pair === undefined; i++) {
      const name = `h${i.toString(36)}.samples`
      const other = seen.get(hashOf(name))
      if (other === undefined) seen.set(hashOf(name), name)
      else pair = [other, name]
    }
    const numbers = new HostNumbers(1_000_000)
    expect(numbers.add(pair[0])).toBe(0)
    expect(numbers.find(pair[1])).toBe(-1)
    expect(numbers.add(pair[1])).toBe(1)
    expect([numbers.find(pair[0]), numbers.find(pair[1])]).toEqual([0, 1])
    const many = [...seen.values()].slice(0, 50_000)
    for (const name of many) if (numbers.find(name) === -1) numbers.add(name)
    for (const name of many) expect(numbers.find(name)).toBeGreaterThanOrEqual(0)
    expect(numbers.find("h0.sample")).toBe(-1)
    expect(numbers.size).toBe(many.length + (many.includes(pair[0]) ? 1 : 2))
  })
})
