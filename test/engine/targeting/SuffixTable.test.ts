import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { SuffixTable, suffixHash } from "../../../src/engine/targeting/SuffixTable.ts"

/** The reference: the longest key that is the host or follows one of its dots, by slicing. */
const longestKey = (keys: ReadonlySet<string>, host: string): { key: string; at: number } | undefined => {
  for (let at = 0; at >= 0 && at <= host.length; at = host.indexOf(".", at) + 1 || -1) {
    if (keys.has(host.slice(at))) return { key: host.slice(at), at }
  }
  return undefined
}

describe("SuffixTable", () => {
  it("finds the longest key at a label boundary, where it starts, and nothing inside a label", () => {
    const table = new SuffixTable<string>()
    for (const key of ["edu", "mit.edu", "ac.uk", "ox.ac.uk", "gmail.com"]) table.set(key, key)
    expect(table.walk("mit.edu")).toBe("mit.edu")
    expect(table.foundAt).toBe(0)
    expect(table.walk("stu.cs.mit.edu")).toBe("mit.edu")
    expect(table.foundAt).toBe(7)
    expect(table.walk("newcollege.edu")).toBe("edu")
    expect(table.walk("xmit.edu")).toBe("edu")
    expect(table.walk("mail.gmail.com")).toBe("gmail.com")
    expect(table.walk("agmail.com")).toBeUndefined()
    expect(table.walk("ox.ac.ukx")).toBeUndefined()
  })

  it("replaces a key's value, keeps every key through growth, and hashes a suffix as its own text", () => {
    const table = new SuffixTable<string | { readonly key: string }>()
    const keys = Array.from({ length: 5000 }, (_, i) => `d${i}.example`)
    for (const key of keys) table.set(key, key)
    const record = { key: "d42.example" }
    table.set("d42.example", record)
    expect(table.size).toBe(keys.length)
    expect(table.walk("www.d42.example")).toBe(record)
    for (const key of keys) expect(table.walk(`a.${key}`)).toBe(key === "d42.example" ? record : key)
    expect([...table.values()].length).toBe(keys.length)
    expect(suffixHash("a.mit.edu", 2)).toBe(suffixHash("mit.edu", 0))
  })

  it("agrees with slicing on arbitrary hosts and keys", () => {
    const label = fc.constantFrom("a", "b", "ab", "edu", "x-y", "0")
    const name = fc.array(label, { minLength: 1, maxLength: 4 }).map((labels) => labels.join("."))
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 40 }), fc.array(name, { maxLength: 20 }), (keys, hosts) => {
        const table = new SuffixTable<string>()
        for (const key of keys) table.set(key, key)
        const set = new Set(keys)
        for (const host of [...hosts, ...keys]) {
          const expected = longestKey(set, host)
          const found = table.walk(host)
          expect(found).toBe(expected?.key)
          if (expected !== undefined) expect(table.foundAt).toBe(expected.at)
        }
      })
    )
  })
})
