import { describe, expect, it } from "vitest"
import { IndexBuilder } from "../../../src/engine/institutions/IndexBuilder.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { fixtureBuilder, fixtureTable } from "../../fixtures.ts"

const table = fixtureTable()

const kindOf = (host: string) => table.lookup(host).kind

describe("InstitutionTable.lookup", () => {
  it("finds a listed domain and its sub-domains", () => {
    const match = table.lookup("mit.edu")
    expect(match.kind).toBe("listed")
    if (match.kind !== "listed") return
    expect(match.entry.institution.name).toBe("Massachusetts Institute of Technology")
    expect(match.matchedDomain).toBe("mit.edu")
    const sub = table.lookup("math.mit.edu")
    expect(sub.kind === "listed" && sub.matchedDomain).toBe("mit.edu")
  })

  it("lets a deny under an allow win (stoplisted sub-domain)", () => {
    expect(kindOf("staff.mit.edu")).toBe("deny")
    expect(kindOf("a.staff.mit.edu")).toBe("deny")
  })

  it("lets an allow under a deny win (listed sub-domain of a stoplisted host)", () => {
    expect(kindOf("y.edu.cn")).toBe("deny")
    const match = table.lookup("stu.y.edu.cn")
    expect(match.kind).toBe("listed")
    expect(match.kind === "listed" && match.entry.institution.name).toBe("Example University Students")
  })

  it("never treats a bare public suffix as an institution", () => {
    expect(kindOf("edu.cn")).toBe("none")
    expect(kindOf("ac.uk")).toBe("none")
    expect(kindOf("edu")).toBe("none")
    const builder = new IndexBuilder()
    builder.addInstitution({ name: "Not an institution", domains: ["edu.cn", "ac.uk"] }, { dataset: "bad" })
    expect(builder.report.droppedPublicSuffixes).toEqual(["edu.cn", "ac.uk"])
    expect(InstitutionTable.fromData(builder.finish()).lookup("edu.cn").kind).toBe("none")
  })

  it("matches academic suffix rules with the registrable domain, at lower confidence than listed domains", () => {
    const match = table.lookup("cs.newcollege.edu")
    expect(match.kind).toBe("suffix")
    if (match.kind !== "suffix") return
    expect(match.matchedDomain).toBe("newcollege.edu")
    expect(match.rule.suffix).toBe("edu")
    expect(match.rule.country).toBe("US")
    expect(table.lookup("lincoln.k12.ca.us").kind === "suffix" && table.lookup("lincoln.k12.ca.us")).toMatchObject({
      rule: { suffix: "k12.ca.us", type: "school" }
    })
  })

  it("never matches an IDN look-alike to the ASCII institution", () => {
    // "mіt.edu" with a Cyrillic і is a different host in its ASCII form.
    const lookalike = new URL("http://mіt.edu").hostname
    expect(lookalike.startsWith("xn--")).toBe(true)
    const match = table.lookup(lookalike)
    expect(match.kind === "listed").toBe(false)
  })

  it("resolves abused domains to their institution, flagged", () => {
    const whole = table.lookup("mdx.ac")
    expect(whole.kind === "listed" && whole.entry.abused).toBe(true)
    expect(whole.kind === "listed" && whole.entry.summary.flags).toEqual(["abused"])
    const sub = table.lookup("academia.umb.edu.co")
    expect(sub.kind).toBe("listed")
    if (sub.kind !== "listed") return
    expect(sub.entry.abused).toBe(true)
    expect(sub.entry.institution.name).toBe("Universidad de Ejemplo")
    const clean = table.lookup("umb.edu.co")
    expect(clean.kind === "listed" && clean.entry.abused).toBe(false)
  })

  it("keeps provenance for every institution", () => {
    const match = table.lookup("ox.ac.uk")
    expect(match.kind === "listed" && match.entry.institution.sources).toEqual([{ dataset: "fixture", version: "1" }])
  })

  it("shares what institutions repeat without letting one change it for the others", () => {
    const [mit, ox] = [table.lookup("mit.edu"), table.lookup("ox.ac.uk")].map((match) =>
      match.kind === "listed" ? match.entry.institution : undefined
    )
    expect(mit?.sources).toBe(ox?.sources)
    expect(mit?.flags).toBe(ox?.flags)
    for (const shared of [mit!.sources, mit!.flags, mit!.evidence]) expect(Object.isFrozen(shared)).toBe(true)
    expect(() => (mit!.flags as Array<string>).push("abused")).toThrow(TypeError)
    expect(ox?.flags).toEqual([])
  })
})

describe("country inference", () => {
  const country = (host: string) => {
    const match = table.lookup(host)
    return match.kind === "listed"
      ? [match.entry.institution.country, match.entry.institution.countrySource]
      : match.kind === "suffix"
        ? [match.rule.country, "suffix-rule"]
        : undefined
  }

  it("takes the dataset's country first", () => {
    expect(country("mit.edu")).toEqual(["US", "dataset"])
    expect(country("springfield-high.org")).toEqual(["US", "dataset"])
  })

  it("falls back to the ccTLD, mapping uk to GB", () => {
    expect(country("ox.ac.uk")).toEqual(["GB", "cctld"])
    expect(country("tum.de")).toEqual(["DE", "cctld"])
    expect(country("x.edu.cn")).toEqual(["CN", "cctld"])
  })

  it("falls back to the academic suffix rule (.edu is US)", () => {
    const builder = fixtureBuilder()
    builder.addInstitution({ name: "Somewhere College", domains: ["somewhere.edu"] }, { dataset: "t" })
    const match = InstitutionTable.fromData(builder.finish()).lookup("somewhere.edu")
    expect(match.kind === "listed" && [match.entry.institution.country, match.entry.institution.countrySource]).toEqual(
      ["US", "suffix-rule"]
    )
    expect(country("anything.edu")).toEqual(["US", "suffix-rule"])
  })

  it("leaves the country unknown for generic TLDs without dataset country", () => {
    const builder = new IndexBuilder()
    builder.addInstitution({ name: "Global Institute", domains: ["global-institute.org"] }, { dataset: "t" })
    const match = InstitutionTable.fromData(builder.finish()).lookup("global-institute.org")
    expect(match.kind === "listed" && match.entry.institution.country).toBe(null)
  })
})
