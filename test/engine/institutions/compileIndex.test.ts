import { describe, expect, it } from "vitest"
import { compileInstitutionIndex } from "../../../src/engine/institutions/compileIndex.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { compareReleases, latestRecords, rorRecordRow } from "../../../src/engine/institutions/sources/ror.ts"
import { swotDomainOf, swotEntry } from "../../../src/engine/institutions/sources/swot.ts"
import { rorSnapshot, rorV2, subdivisions, swotSnapshot } from "./sourceFixtures.ts"

describe("ROR records", () => {
  it("reads schema v2 and v1, keeping root website hosts only", () => {
    expect(
      rorRecordRow(
        rorV2("05x2bcf33", "Technical University of Munich", ["education", "funder"], {
          domains: ["tum.de"],
          website: "https://www.tum.de/",
          country: "DE",
          subdivision: "BY",
          aliases: ["Technische Universität München"],
          acronyms: ["TUM"]
        })
      )
    ).toEqual([
      "05x2bcf33",
      "Technical University of Munich",
      ["education", "funder"],
      "active",
      "DE",
      "DE-BY",
      ["tum.de"],
      ["tum.de"],
      ["Technische Universität München"],
      ["TUM"],
      []
    ])
    const v1 = {
      id: "https://ror.org/0abc",
      name: "Example College",
      status: "active",
      types: ["Education"],
      links: ["http://college.example.org/about"],
      country: { country_code: "US" },
      addresses: [{ geonames_city: { geonames_admin1: { code: "US.CA" } } }],
      aliases: [],
      acronyms: ["EC"],
      labels: [],
      relationships: [{ type: "Parent", id: "https://ror.org/0parent" }]
    }
    // The only website has a path: the unit lives on someone else's site, so there is no host to match.
    expect(rorRecordRow(v1)).toBeUndefined()
    expect(rorRecordRow({ ...v1, links: ["https://college.example.org"] })).toMatchObject([
      "0abc",
      "Example College",
      ["education"],
      "active",
      "US",
      "US-CA",
      [],
      ["college.example.org"],
      [],
      ["EC"],
      ["0parent"]
    ])
  })

  it("keeps the latest release of each record and drops withdrawn ones", () => {
    const older = rorV2("01", "Old Name", ["education"], { domains: ["old.edu"] })
    const newer = rorV2("01", "New Name", ["education"], { domains: ["new.edu"] })
    const withdrawn = rorV2("02", "Gone", ["education"], { domains: ["gone.edu"], status: "withdrawn" })
    expect(latestRecords([older, withdrawn, newer]).map((row) => row[1])).toEqual(["New Name"])
    expect(["v1.10", "v1.9", "v1.17.1", "v1.17", "v2.0"].sort(compareReleases)).toEqual([
      "v1.9",
      "v1.10",
      "v1.17",
      "v1.17.1",
      "v2.0"
    ])
  })
})

describe("swot files", () => {
  it("turns a path into a domain and keeps every name but the group marker", () => {
    expect(swotDomainOf("ng/edu/unaab.txt")).toBe("unaab.edu.ng")
    expect(swotDomainOf("tlds.txt")).toBeUndefined()
    expect(swotEntry("x.edu", "X University\nX U\n.group\n")).toEqual(["x.edu", "X University", "X U"])
  })
})

const compile = () =>
  compileInstitutionIndex({
    swot: swotSnapshot(
      [
        ["oldlisted.edu", "Old Listed College"],
        ["af.example.mil", "Example Air Force Academy"],
        ["munich-alias.de", "Technical University of Munich"],
        ["abroad.edu", "Korea Example Institute of Science"]
      ],
      { stoplist: ["alumni.oldlisted.edu"] }
    ),
    ror: rorSnapshot([
      rorV2("01tum", "Technical University of Munich", ["education"], {
        domains: ["tum.de"],
        country: "DE",
        subdivision: "BY",
        acronyms: ["TUM"]
      }),
      rorV2("02kor", "Korea Example Institute of Science", ["education"], {
        domains: ["keis.ac.kr"],
        country: "KR"
      }),
      rorV2("03net", "Example Research and Education Network", ["other"], { domains: ["renet.ac.za"], country: "ZA" }),
      rorV2("04dep", "Department of the Example Air Force", ["government"], { domains: ["af.example.mil"] }),
      rorV2("05cmp", "Example Widgets Inc.", ["company"], { domains: ["widgets.example.com"] }),
      rorV2("06lab", "Example Laboratory", ["facility"], { domains: ["lab.example.org"], country: "GB" }),
      rorV2("07uni", "University of Example", ["education"], { website: "https://www.ex-uni.ac.uk", country: "GB" })
    ]),
    nonInstitutions: [{ domain: "platform.edu", kind: "platform", name: "A platform", country: "US" as never }],
    subdivisions: subdivisions()
  })

describe("compileInstitutionIndex", () => {
  const { data, report } = compile()
  const table = InstitutionTable.fromData(data)
  const listed = (host: string) => {
    const match = table.lookup(host)
    return match.kind === "listed" ? match.entry.institution : undefined
  }

  it("fills listed domains from ROR and adds ROR institutions nobody listed", () => {
    expect(listed("tum.de")).toMatchObject({
      name: "Technical University of Munich",
      country: "DE",
      region: "DE-BY",
      type: "university",
      ror: "01tum",
      evidence: { type: { source: "ror", rule: "ror-type:education+name" }, country: { source: "ror" } }
    })
    expect(listed("ex-uni.ac.uk")).toMatchObject({ name: "University of Example", country: "GB" })
    expect(listed("lab.example.org")).toMatchObject({
      type: "research",
      evidence: { type: { rule: "ror-type:facility" } }
    })
    // A company outside academic zones is left out altogether.
    expect(table.lookup("widgets.example.com").kind).toBe("none")
  })

  it("joins a listed domain to the one ROR institution of its name, and takes its country", () => {
    expect(listed("munich-alias.de")?.id).toBe(listed("tum.de")?.id)
    expect(listed("abroad.edu")).toMatchObject({
      country: "KR",
      evidence: { country: { source: "ror", rule: "dataset-country" } }
    })
    expect(report.nameMatches).toBe(2)
  })

  it("records non-institutions from the curated list and from ROR where a listing or zone holds them", () => {
    expect(table.lookup("platform.edu")).toMatchObject({
      kind: "non-institution",
      entry: { organization: { kind: "platform", rule: "curated" } }
    })
    expect(table.lookup("mail.renet.ac.za")).toMatchObject({
      kind: "non-institution",
      entry: { organization: { kind: "research-network", rule: "ror" } }
    })
    // Listed by swot for an academy, but the registry says the domain is the government body's.
    expect(table.lookup("af.example.mil")).toMatchObject({
      kind: "non-institution",
      entry: { organization: { kind: "government" } }
    })
  })

  it("types zones by their policy and keeps the stoplist", () => {
    expect(table.lookup("x.k12.ca.us")).toMatchObject({ kind: "suffix", rule: { type: "school", region: "US-CA" } })
    expect(table.lookup("new.edu")).toMatchObject({ kind: "suffix", rule: { type: "college", country: "US" } })
    expect(table.lookup("alumni.oldlisted.edu").kind).toBe("deny")
  })
})

describe("names", () => {
  it("are plain text: character references a source left in them are the characters they stand for", () => {
    const data = compileInstitutionIndex({
      swot: swotSnapshot([
        ["sample-amp.ac.zm", "Sample University of Science &amp; Technology", "Sample &#39;Tech&#x27;"],
        ["sample-odd.ac.zm", "Sample &unknown; College &#0;"]
      ]),
      ror: rorSnapshot([]),
      nonInstitutions: [],
      subdivisions: subdivisions()
    }).data
    const table = InstitutionTable.fromData(data)
    const first = table.lookup("sample-amp.ac.zm")
    const second = table.lookup("sample-odd.ac.zm")
    if (first.kind !== "listed" || second.kind !== "listed") throw new Error("expected listed domains")
    expect(first.entry.institution.name).toBe("Sample University of Science & Technology")
    expect(first.entry.institution.names).toEqual(["Sample 'Tech'"])
    expect(second.entry.institution.name).toBe("Sample &unknown; College &#0;")
  })
})
