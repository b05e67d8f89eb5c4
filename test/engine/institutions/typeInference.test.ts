import { describe, expect, it } from "vitest"
import { loadBuiltInInstitutions } from "../../../src/engine/InstitutionIndex.ts"
import { compileInstitutionIndex } from "../../../src/engine/institutions/compileIndex.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { confidenceOf, measureTypeRules } from "../../../src/engine/institutions/typeInference.ts"
import { rorSnapshot, subdivisions, swotSnapshot } from "./sourceFixtures.ts"

/** `n` listed domains under `zone`, named so their type is read from the name. */
const members = (zone: string, n: number, kind: string, prefix: string): Array<[string, string]> =>
  Array.from({ length: n }, (_, i) => [`${prefix}${i}.${zone}`, `${prefix} ${i} ${kind}`])

const compile = (domains: ReadonlyArray<[string, string]>) =>
  compileInstitutionIndex({
    swot: swotSnapshot(domains),
    ror: rorSnapshot([]),
    nonInstitutions: [],
    subdivisions: subdivisions()
  }).data

describe("types inferred for institutions their data does not type", () => {
  // A zone of 30 universities and 10 colleges, and 25 colleges elsewhere whose labels say "college".
  const data = compile([
    ...members("ac.zm", 30, "University", "alpha"),
    ...members("ac.zm", 10, "College", "beta"),
    ...Array.from({ length: 25 }, (_, i): [string, string] => [`gamma${i}college.org`, `Gamma ${i} College`])
  ])

  it("measures each rule leave-one-out on the typed institutions: precision and support", () => {
    const rules = new Map(measureTypeRules(data).map((row) => [row[0], row]))
    // Each of the 40 predicted by the other 39: the majority stays university, right for the 30.
    expect(rules.get("zone-composition:ac.zm")).toEqual(["zone-composition:ac.zm", "university", 0.75, 40])
    expect(rules.get("label-word:college")).toEqual(["label-word:college", "college", 1, 25])
  })

  it("types a host matched by its zone alone by the best rule that fires, with the rule as evidence", () => {
    const table = InstitutionTable.fromData(data)
    const byZone = table.lookup("newplace.ac.zm")
    expect(byZone.kind).toBe("suffix")
    if (byZone.kind !== "suffix") return
    expect(byZone.rule.summary.type).toBe("university")
    expect(byZone.rule.summary.evidence.type).toEqual({
      source: "campusgate",
      rule: "zone-composition:ac.zm",
      confidence: "low",
      precision: 0.75
    })
    // The label's word is measured better than the zone's members: it wins.
    const byLabel = table.lookup("stu.newtowncollege.ac.zm")
    if (byLabel.kind !== "suffix") throw new Error("expected a suffix match")
    expect(byLabel.rule.summary.type).toBe("college")
    expect(byLabel.rule.summary.evidence.type).toMatchObject({ rule: "label-word:college", precision: 1 })
  })

  it("gives confidence by precision and the number measured", () => {
    expect(confidenceOf(0.97, 500)).toBe("high")
    expect(confidenceOf(0.97, 50)).toBe("medium")
    expect(confidenceOf(0.85, 500)).toBe("medium")
    expect(confidenceOf(0.6, 500)).toBe("low")
  })

  it("ships the rules that measuring the bundled data gives", () => {
    const builtIn = loadBuiltInInstitutions()
    expect(builtIn.typeRules).toEqual(measureTypeRules(builtIn))
    const university = builtIn.typeRules?.find((row) => row[0] === "label-word:university")
    expect(university?.[1]).toBe("university")
    expect(university?.[2]).toBeGreaterThan(0.9)
  })
})
