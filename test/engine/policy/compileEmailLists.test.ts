import { describe, expect, it } from "@effect/vitest"
import { getPublicSuffix } from "tldts"
import { compileEmailLists } from "../../../scripts/data/emailLists.ts"
import { emailListNames, listEntries, loadEmailLists } from "../../../src/engine/policy/index.ts"

describe("compileEmailLists", () => {
  const data = compileEmailLists()

  it("produces every list with provenance and a cleaning report", () => {
    for (const name of emailListNames) {
      const list = data.lists[name]
      expect(list.source.version).toMatch(/^\d+\.\d+\.\d+/)
      expect(list.report.kept).toBe(listEntries(list).length)
      expect(list.report.read).toBe(
        list.report.kept + list.report.duplicate + list.report.invalid + list.report.publicSuffix
      )
    }
  })

  it("keeps domains lower-case ASCII, sorted, unique and never a public suffix", () => {
    for (const name of ["disposable", "disposableWildcard", "freeMail", "commonMailProviders"] as const) {
      const entries = listEntries(data.lists[name])
      expect(entries.length).toBeGreaterThan(0)
      for (let i = 0; i < entries.length; i++) {
        const entry = entries[i]!
        expect(entry).toMatch(/^[a-z0-9.-]+$/)
        expect(entry).toContain(".")
        if (i > 0) expect(entries[i - 1]! < entry).toBe(true)
      }
      expect(entries.filter((entry) => getPublicSuffix(entry) === entry)).toEqual([])
    }
  })

  it("converts IDN entries to punycode and drops what is not a domain", () => {
    const disposable = new Set(listEntries(data.lists.disposable))
    expect(disposable.has("xn--gmal-nza.net")).toBe(true) // gmaıl.net, with a dotless ı
    expect(data.lists.disposable.report.publicSuffix).toBeGreaterThan(0) // edu.pl is listed upstream
    expect(data.lists.freeMail.report.invalid).toBeGreaterThan(0) // an email address is listed upstream
  })

  it("is deterministic and loads", () => {
    expect(JSON.stringify(compileEmailLists())).toBe(JSON.stringify(data))
    const lists = loadEmailLists(JSON.parse(JSON.stringify(data)))
    expect(lists.isDisposable("mailinator.com")).toBe(true)
  })
})
