import { describe, expect, it } from "vitest"
import { buildInstitutionTable } from "../../../src/engine/InstitutionIndex.ts"
import { IndexBuilder } from "../../../src/engine/institutions/IndexBuilder.ts"
import { InstitutionSearch } from "../../../src/engine/institutions/InstitutionSearch.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { DatasetError, type DatasetSpec, parseDataset } from "../../../src/engine/institutions/userDatasets.ts"
import { fixtureBuilder } from "../../fixtures.ts"

const merged = (...specs: Array<DatasetSpec>) => {
  const builder = fixtureBuilder()
  for (const spec of specs) {
    const source = builder.sourceAt(builder.source({ dataset: spec.name }))
    for (const record of parseDataset(spec)) builder.addInstitution(record, source, { override: true })
  }
  return InstitutionTable.fromData(builder.finish())
}

const institutionAt = (table: InstitutionTable, host: string) => {
  const match = table.lookup(host)
  return match.kind === "listed" ? match.entry.institution : undefined
}

const problemsOf = (spec: DatasetSpec) => {
  try {
    parseDataset(spec)
  } catch (error) {
    expect(error).toBeInstanceOf(DatasetError)
    return (error as DatasetError).problems
  }
  throw new Error("expected a DatasetError")
}

describe("Hipo JSON datasets", () => {
  const hipo = JSON.stringify([
    {
      name: "Universidad Nueva",
      domains: ["UNUEVA.edu.mx", "alumnos.unueva.edu.mx"],
      alpha_two_code: "MX",
      "state-province": null,
      country: "Mexico",
      web_pages: ["https://unueva.edu.mx"]
    }
  ])

  it("adds institutions with their country and provenance", () => {
    const table = merged({ name: "extra.json", format: "hipo", content: hipo })
    const institution = institutionAt(table, "alumnos.unueva.edu.mx")
    expect(institution).toMatchObject({
      name: "Universidad Nueva",
      country: "MX",
      countrySource: "dataset",
      domains: ["unueva.edu.mx", "alumnos.unueva.edu.mx"],
      sources: [{ dataset: "extra.json" }]
    })
  })

  it("reports bad records with their index and field", () => {
    const problems = problemsOf({
      name: "bad.json",
      format: "hipo",
      content: JSON.stringify([{ name: "X", domains: "x.edu" }])
    })
    expect(problems[0]).toMatchObject({ location: "[0]", field: "domains" })
    expect(problemsOf({ name: "bad.json", format: "hipo", content: "{" })[0]!.message).toMatch(/not valid JSON/)
  })
})

describe("CSV datasets", () => {
  it("reads domain,name,country,region,type rows, groups domains by name, and overrides built-in facts", () => {
    const csv = [
      "domain,name,country,region,type",
      "mit.edu,MIT (renamed),US,US-MA,research",
      'partner-college.org,"Partner College, Springfield",US,,college',
      'pc-online.org,"Partner College, Springfield",US,,college'
    ].join("\r\n")
    const table = merged({ name: "partners.csv", format: "csv", content: csv })
    expect(institutionAt(table, "mit.edu")).toMatchObject({
      name: "MIT (renamed)",
      region: "US-MA",
      type: "research",
      names: ["Massachusetts Institute of Technology"]
    })
    expect(institutionAt(table, "mit.edu")?.sources.map((source) => source.dataset)).toContain("partners.csv")
    expect(institutionAt(table, "pc-online.org")?.domains).toEqual(["partner-college.org", "pc-online.org"])
  })

  it("replaces the built-in record of a domain it names: one institution, its id and other domains kept", () => {
    const builder = fixtureBuilder()
    const builtIn = builder.sourceAt(builder.source({ dataset: "built-in" }))
    builder.addInstitution(
      { name: "Technical University of Munich", domains: ["tum.edu", "mytum.edu"], country: "DE" },
      builtIn
    )
    const csv = "domain,name,country,region,type\ntum.edu,Technische Universität München,DE,DE-BY,university\n"
    const source = builder.sourceAt(builder.source({ dataset: "regions.csv" }))
    for (const record of parseDataset({ name: "regions.csv", format: "csv", content: csv }))
      builder.addInstitution(record, source, { override: true })
    const table = InstitutionTable.fromData(builder.finish())
    const tum = institutionAt(table, "tum.edu")
    expect(tum).toMatchObject({
      id: "tum.edu",
      name: "Technische Universität München",
      region: "DE-BY",
      type: "university",
      domains: ["tum.edu", "mytum.edu"]
    })
    // The same institution from its other domain, and once in a search, found by its old name too.
    expect(institutionAt(table, "mytum.edu")?.id).toBe("tum.edu")
    const found = InstitutionSearch.of(table).search({ q: "technical university of munich", limit: 10 })
    expect(found.institutions.filter((entry) => entry.domains.includes("tum.edu")).map((entry) => entry.id)).toEqual([
      "tum.edu"
    ])
    expect(table.institutions.filter((entry) => entry.id.startsWith("tum.edu"))).toHaveLength(1)
  })

  it("names the line and field of every bad row", () => {
    const csv = "domain,name,country\nok.edu,Fine,US\nbad domain,Broken,US\nx.edu,Wrong country,UK\n"
    const problems = problemsOf({ name: "p.csv", format: "csv", content: csv })
    expect(problems).toEqual([
      expect.objectContaining({ location: "3", field: "domain" }),
      expect.objectContaining({ location: "4", field: "country", message: expect.stringContaining('"GB"') })
    ])
    expect(problemsOf({ name: "p.csv", format: "csv", content: "host,name\n" })[0]).toMatchObject({ field: "host" })
  })

  it("rejects domains no institution can own instead of dropping them silently", () => {
    const csv = "domain,name\npartner.samples,Unknown TLD\nco.nz,Public suffix\n"
    expect(problemsOf({ name: "p.csv", format: "csv", content: csv })).toEqual([
      { location: "2", field: "domain", message: '"partner.samples" has no known top-level domain' },
      { location: "3", field: "domain", message: '"co.nz" is a public suffix, which no institution owns' }
    ])
  })
})

describe("YAML datasets", () => {
  it("reads a list of institutions and reports bad entries with their line", () => {
    const yaml = "- name: Hochschule Neu\n  domains: [hs-neu.de]\n  type: college\n- name: Broken\n  domains: []\n"
    expect(() => parseDataset({ name: "i.yaml", format: "yaml", content: yaml })).toThrow(DatasetError)
    const problems = problemsOf({ name: "i.yaml", format: "yaml", content: yaml })
    expect(problems[0]).toMatchObject({ location: "4", field: "domains" })
    const table = merged({ name: "i.yaml", format: "yaml", content: yaml.split("- name: Broken")[0]! })
    expect(institutionAt(table, "hs-neu.de")).toMatchObject({ type: "college", country: "DE", countrySource: "cctld" })
  })

  it("rejects unknown keys so typos do not pass silently", () => {
    const problems = problemsOf({
      name: "i.yaml",
      format: "yaml",
      content: "- name: A\n  domains: [a.edu]\n  contry: US\n"
    })
    expect(problems[0]?.field).toBe("contry")
  })
})

describe("InstitutionIndex with datasets only", () => {
  it("can leave the built-in data out", () => {
    const table = buildInstitutionTable({
      builtIn: false,
      datasets: [{ name: "only.csv", format: "csv", content: "domain,name\nonly-college.org,Only College\n" }]
    })
    expect(table.size).toBe(1)
    expect(institutionAt(table, "only-college.org")?.name).toBe("Only College")
    expect(new IndexBuilder().finish().institutions).toEqual([])
  })
})
