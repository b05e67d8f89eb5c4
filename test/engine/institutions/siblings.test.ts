import { describe, expect, it } from "vitest"
import { compileInstitutionIndex } from "../../../src/engine/institutions/compileIndex.ts"
import { IndexBuilder } from "../../../src/engine/institutions/IndexBuilder.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { decodeSiblings, encodeSiblings, siblingVia } from "../../../src/engine/institutions/siblings.ts"
import { rorSnapshot, rorV2, subdivisions, swotSnapshot } from "./sourceFixtures.ts"

/** Open data with institutions at home and `.edu` domains registered abroad. */
const compile = () =>
  compileInstitutionIndex({
    swot: swotSnapshot([
      ["samplesuni.ac.kr", "Samples University"],
      ["samplesuni.edu", "Samples University"],
      ["othername.edu", "Other Name College"],
      ["othername.ac.kr", "Something Else Entirely"]
    ]),
    ror: rorSnapshot([
      rorV2("01aaaaa01", "Samples Institute of Technology", ["education"], {
        domains: ["sit.de", "samplestech.de"],
        country: "DE",
        subdivision: "BY"
      }),
      rorV2("01aaaaa02", "Twin Label University", ["education"], { domains: ["twinlabel.de"], country: "DE" }),
      rorV2("01aaaaa03", "Twin Label College", ["education"], { domains: ["twinlabel.ac.uk"], country: "GB" }),
      rorV2("01aaaaa04", "Home Samples College", ["education"], { domains: ["homesamples.org"], country: "US" })
    ]),
    nonInstitutions: [],
    subdivisions: subdivisions()
  })

const lookup = (table: InstitutionTable, host: string) => {
  const match = table.lookup(host)
  if (match.kind !== "suffix") throw new Error(`${host}: expected a suffix match, got ${match.kind}`)
  return { rule: match.rule, matchedDomain: match.matchedDomain }
}

describe(".edu domains registered abroad", () => {
  it("lend an unlisted .edu domain the facts of the one institution elsewhere with its label", () => {
    const table = InstitutionTable.fromData(compile().data)
    const { rule, matchedDomain } = lookup(table, "students.samplestech.edu")
    expect(matchedDomain).toBe("samplestech.edu")
    expect(rule.suffix).toBe("edu")
    expect(rule.summary).toMatchObject({
      id: "suffix:edu",
      name: "Samples Institute of Technology",
      country: "DE",
      region: "DE-BY",
      type: "university"
    })
    expect(rule.countrySource).toBe("dataset")
    expect(rule.summary.evidence.country).toEqual({
      source: "campusgate",
      rule: "sibling-domain:samplestech.de",
      confidence: "low"
    })
    // The zone still decides what the match is: a suffix rule a group may refuse.
    expect(lookup(table, "samplestech.edu").rule).toBe(rule)
  })

  it("lend nothing when the label is shared, short, American or unknown", () => {
    const table = InstitutionTable.fromData(compile().data)
    for (const host of ["twinlabel.edu", "sit.edu", "homesamples.edu", "nobody.edu"]) {
      const { rule } = lookup(table, host)
      expect(rule.summary, host).toMatchObject({ name: null, country: "US" })
      expect(rule.countrySource, host).toBe("suffix-rule")
    }
  })

  it("give a listed .edu domain the country of a sibling of the same name, and only of the same name", () => {
    const { data } = compile()
    const table = InstitutionTable.fromData(data)
    const listed = table.lookup("samplesuni.edu")
    if (listed.kind !== "listed") throw new Error("samplesuni.edu is listed")
    expect(listed.entry.institution).toMatchObject({ country: "KR", countrySource: "dataset" })
    expect(listed.entry.institution.evidence.country).toEqual({
      source: "campusgate",
      rule: "sibling-domain:samplesuni.ac.kr",
      confidence: "medium"
    })
    const other = table.lookup("othername.edu")
    if (other.kind !== "listed") throw new Error("othername.edu is listed")
    expect(other.entry.institution).toMatchObject({ country: "US", countrySource: "suffix-rule" })
  })

  it("are kept when user datasets are merged, unless a dataset lists the domain", () => {
    const { data } = compile()
    const merged = IndexBuilder.from(data)
    merged.addInstitution({ name: "Listed Now", domains: ["othername.de"], country: "DE" }, { dataset: "user" })
    expect(lookup(InstitutionTable.fromData(merged.finish()), "samplestech.edu").rule.summary.country).toBe("DE")
    const listing = IndexBuilder.from(data)
    listing.addInstitution(
      { name: "Samples Tech US", domains: ["samplestech.edu"], country: "US" },
      { dataset: "user" }
    )
    const listed = InstitutionTable.fromData(listing.finish()).lookup("samplestech.edu")
    expect(listed.kind).toBe("listed")
  })
})

describe("the compiled siblings", () => {
  it("find a label's domain wherever it stands, and never by a prefix of another label", () => {
    const rows = [
      ["alpha", "alpha.ac.kr"],
      ["alphabet", "alphabet.de"],
      ["beta", "beta.edu.au"]
    ] as const
    const text = encodeSiblings(rows)
    expect(decodeSiblings(text)).toEqual(rows)
    expect(siblingVia(text, "alpha")).toBe("alpha.ac.kr")
    expect(siblingVia(text, "alphabet")).toBe("alphabet.de")
    expect(siblingVia(text, "beta")).toBe("beta.edu.au")
    expect(siblingVia(text, "alph")).toBeUndefined()
    expect(siblingVia(text, "bet")).toBeUndefined()
    expect(siblingVia("", "alpha")).toBeUndefined()
  })
})
