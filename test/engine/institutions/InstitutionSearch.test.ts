import { describe, expect, it } from "vitest"
import { InstitutionSearch } from "../../../src/engine/institutions/InstitutionSearch.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { fixtureBuilder } from "../../fixtures.ts"

const source = { dataset: "fixture", version: "1" }
const table = () => {
  const builder = fixtureBuilder()
  builder.addInstitution(
    { name: "Technical University of Munich", names: ["TUM"], domains: ["mytech.de"], country: "DE" },
    source
  )
  builder.addInstitution({ name: "École Polytechnique", domains: ["polytechnique.fr"], country: "FR" }, source)
  builder.addInstitution({ name: "Munich Music School", domains: ["mms.de"], country: "DE" }, source)
  return InstitutionTable.fromData(builder.finish())
}
const names = (page: { institutions: ReadonlyArray<{ name: string | null }> }) => page.institutions.map((i) => i.name)

describe("InstitutionSearch", () => {
  const search = InstitutionSearch.of(table())

  it("matches every query word as a prefix of a word, accents and case aside", () => {
    expect(names(search.search({ q: "tech univ munich", limit: 5 }))).toEqual(["Technical University of Munich"])
    expect(names(search.search({ q: "ECOLE poly", limit: 5 }))).toEqual(["École Polytechnique"])
    expect(names(search.search({ q: "munich", limit: 5 }))).toEqual(
      ["Munich Music School", "Technische Universität München", "Technical University of Munich"].filter(
        (n) => n !== "Technische Universität München"
      )
    )
  })

  it("finds acronyms and domain labels, whole words first", () => {
    // A domain's own label (tum.de) first, then the acronym.
    expect(names(search.search({ q: "tum", limit: 2 }))).toEqual([
      "Technische Universität München",
      "Technical University of Munich"
    ])
    expect(names(search.search({ q: "mit", limit: 1 }))).toEqual(["Massachusetts Institute of Technology"])
  })

  it("filters by country and type, counts every match and pages", () => {
    const all = search.search({ q: "munich", country: "DE", limit: 1 })
    expect(all.total).toBe(2)
    expect(all.institutions).toHaveLength(1)
    const second = search.search({ q: "munich", country: "DE", limit: 1, offset: 1 })
    expect(second.institutions[0]!.id).not.toBe(all.institutions[0]!.id)
    expect(names(search.search({ q: "munich", type: "college", limit: 5 }))).toEqual(["Munich Music School"])
    expect(search.search({ q: "nothing like this", limit: 5 })).toEqual({ institutions: [], total: 0 })
  })

  it("lists institutions by name when there are no words", () => {
    const page = search.search({ country: "DE", limit: 10 })
    expect(names(page)).toEqual([...names(page)].sort((a, b) => (a!.toLowerCase() < b!.toLowerCase() ? -1 : 1)))
    expect(page.institutions.every((i) => i.country === "DE")).toBe(true)
  })
})
