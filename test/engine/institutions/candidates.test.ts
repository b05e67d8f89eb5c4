import { describe, expect, it } from "vitest"
import {
  buildInstitutionTable,
  loadBuiltInInstitutions,
  loadBuiltInTable
} from "../../../src/engine/InstitutionIndex.ts"
import {
  builtInCandidateModel,
  CandidateScorer,
  candidateScorer,
  compileCandidateKnowledge
} from "../../../src/engine/institutions/CandidateScorer.ts"
import { fitLetters, letterRatios } from "../../../src/engine/institutions/candidateLetters.ts"
import {
  buildCandidateKnowledge,
  decodeKnowledge,
  encodeKnowledge,
  featureIds,
  featuresOf,
  scoreFeatures
} from "../../../src/engine/institutions/candidates.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { fitLogistic, rocAuc } from "../../../src/engine/institutions/logistic.ts"
import { encodeTable } from "../../../src/engine/institutions/tableBuffer.ts"

const knowledge = buildCandidateKnowledge({
  institutions: [
    { country: "DE", name: "Hochschule für Musik Hamburg", names: ["HFMH"] },
    { country: "DE", name: "Technische Universität Sampleburg", names: [] },
    { country: "DE", name: "Sampleburg College of Arts", names: [] }
  ],
  places: [["DE", ["Hamburg", "Bayern"]]]
})
const noLetters = new Map<string, number>()
const ids = (domain: string, label: string, suffix: string) =>
  featuresOf({ domain, label, suffix }, knowledge, noLetters).map((f) => f.id)

describe("candidate features", () => {
  it("reads word families, the zone, places and known names from the domain alone", () => {
    expect(ids("musikhochschule-hamburg.de", "musikhochschule-hamburg", "de")).toEqual(
      expect.arrayContaining(["family:college", "family:arts", "zone:cctld", "place"])
    )
    // "sampleburg" names two known institutions in DE; a word of one name only says nothing.
    expect(ids("sampleburg-academy.de", "sampleburg-academy", "de")).toContain("known-name")
    expect(ids("hamburgershop.com", "hamburgershop", "com")).toEqual(
      expect.arrayContaining(["family:commerce", "zone:com"])
    )
    expect(ids("hfmh.de", "hfmh", "de")).toEqual(expect.arrayContaining(["known-acronym", "shape:acronym"]))
    expect(ids("shop.io", "shop", "io")).toContain("zone:generic-cctld")
  })

  it("leaves an institution's own words out while fitting on it", () => {
    const own = { words: new Set(["sampleburg"]), acronyms: new Set<string>() }
    const withOwn = featuresOf(
      { domain: "sampleburg.de", label: "sampleburg", suffix: "de" },
      knowledge,
      noLetters,
      own
    )
    // Two institutions name it; without the domain's own, one is left: not enough.
    expect(withOwn.map((f) => f.id)).not.toContain("known-name")
  })
})

describe("fitting", () => {
  it("fits weights that separate a feature seen with positives from one seen with negatives", () => {
    const examples = [
      ...Array.from({ length: 50 }, () => ({ features: [{ id: "family:university", value: 1 }], positive: true })),
      ...Array.from({ length: 50 }, () => ({ features: [{ id: "family:commerce", value: 1 }], positive: false }))
    ]
    const fitted = fitLogistic(examples, featureIds)
    expect(fitted.weights["family:university"]).toBeGreaterThan(1)
    expect(fitted.weights["family:commerce"]).toBeLessThan(-1)
  })

  it("learns letter sequences that set labels apart", () => {
    const ratios = letterRatios(
      fitLetters(
        [
          ...["unialpha", "unibeta", "unigamma", "unidelta"].map((label) => ({ label, positive: true })),
          ...["shopalpha", "shopbeta", "shopgamma", "shopdelta"].map((label) => ({ label, positive: false }))
        ],
        2
      )
    )
    expect(ratios.get("^uni")).toBeGreaterThan(0)
    expect(ratios.get("sho")).toBeLessThan(0)
  })

  it("measures the area under the ROC curve, ties counting half", () => {
    expect(rocAuc([0.9, 0.8], [0.1, 0.2])).toBe(1)
    expect(rocAuc([0.1], [0.9])).toBe(0)
    expect(rocAuc([0.5], [0.5])).toBe(0.5)
  })
})

describe("the compiled model", () => {
  const scorer = candidateScorer(buildInstitutionTable())

  it("was measured at build time and recommends a score", () => {
    const model = builtInCandidateModel()
    expect(model.auc).toBeGreaterThan(0.8)
    expect(model.recommended.minScore).toBeGreaterThan(0.5)
    expect(model.recommended.falsePositiveRate).toBeLessThanOrEqual(0.003)
  })

  it("scores an academic-looking unknown domain above a shop's, with the signals behind each", () => {
    const school = scorer.candidateOf("mail.musikhochschule-sampleburg.de")!
    const shop = scorer.candidateOf("cheap-shoes-shop.com")!
    expect(school.domain).toBe("musikhochschule-sampleburg.de")
    expect(school.score).toBeGreaterThan(shop.score)
    expect(school.signals.some((s) => s.signal === "family:college" && s.weight > 0)).toBe(true)
    expect(shop.signals.some((s) => s.weight < 0)).toBe(true)
    expect(scoreFeatures(builtInCandidateModel(), "x", []).score).toBeGreaterThan(0)
  })

  it("has no candidate for a host without a registrable domain", () => {
    expect(scorer.candidateOf("com")).toBeNull()
  })
})

describe("the knowledge compiled with a table", () => {
  const data = loadBuiltInInstitutions()
  const compiled = InstitutionTable.fromBuffer(encodeTable(data, { knowledge: compileCandidateKnowledge(data) }))
  const hosts = [
    "mail.musikhochschule-sampleburg.de",
    "hfmt-hamburg.de",
    "hamburger-shop.de",
    "uni-sampleburg.de",
    "cheap-shoes-shop.com",
    "colegio-nacional.edu.ar",
    "tokyo-gakuen.ac.jp",
    "kisu.edu"
  ]

  it("is read with the table, not built on the first unknown host", () => {
    expect(compiled.candidateKnowledge()).toBeDefined()
    expect(loadBuiltInTable().candidateKnowledge()).toBeDefined()
    expect(InstitutionTable.fromData(data).candidateKnowledge()).toBeUndefined()
  })

  it("scores every unknown host as the knowledge built from the table's institutions does", () => {
    const model = builtInCandidateModel()
    const fromBuffer = new CandidateScorer(model, compiled)
    const built = new CandidateScorer(model, InstitutionTable.fromData(data))
    for (const host of hosts) expect(fromBuffer.scored(host)).toEqual(built.scored(host))
    expect(decodeKnowledge(encodeKnowledge(compiled.candidateKnowledge()!))).toEqual(compiled.candidateKnowledge())
  })
})
