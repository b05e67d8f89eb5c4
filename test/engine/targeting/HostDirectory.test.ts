import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { compileInstitutionIndex } from "../../../src/engine/institutions/compileIndex.ts"
import { InstitutionTable } from "../../../src/engine/institutions/InstitutionTable.ts"
import { type EmailLists, loadEmailLists } from "../../../src/engine/policy/EmailLists.ts"
import { HostDirectory } from "../../../src/engine/targeting/HostDirectory.ts"
import { fixtureListsData, fixtureTable } from "../../fixtures.ts"
import { rorSnapshot, rorV2, subdivisions, swotSnapshot } from "../institutions/sourceFixtures.ts"

const table = fixtureTable()

/** The fixture lists, plus disposable domains below institution and suffix-rule keys. */
const listsData = fixtureListsData()
const lists: EmailLists = loadEmailLists({
  ...listsData,
  lists: {
    ...listsData.lists,
    disposable: {
      ...listsData.lists.disposable,
      entries: ["10minutemail.com", "mailinator.com", "spam.mit.edu", "temp.newcollege.edu", "throwaway.ac.uk"].join(
        "\n"
      )
    }
  }
})

/** What the sources say, each asked on its own: the directory must agree. */
const reference = (host: string) => ({
  match: table.lookup(host),
  disposable: lists.isDisposable(host),
  freeMail: lists.isFreeMail(host)
})

const factsOf = (directory: HostDirectory, host: string) => {
  const { match, disposable, freeMail } = directory.facts(host)
  return { match, disposable, freeMail }
}

const bases = [
  "mit.edu",
  "staff.mit.edu",
  "spam.mit.edu",
  "ox.ac.uk",
  "throwaway.ac.uk",
  "newcollege.edu",
  "temp.newcollege.edu",
  "x.edu.cn",
  "stu.y.edu.cn",
  "y.edu.cn",
  "mdx.ac",
  "academia.umb.edu.co",
  "umb.edu.co",
  "gmail.com",
  "mailinator.com",
  "33mail.com",
  "springfield-high.org",
  "district.k12.ca.us",
  "samples.com",
  "edu",
  "ac.uk",
  "com"
]
const prefixes = ["", "a.", "b.c.", "alumni.", "staff.", "spam.", "temp.", "stu."]
const hosts = prefixes.flatMap((prefix) => bases.map((base) => prefix + base))

describe("HostDirectory", () => {
  it("answers every host as the institution table and email lists do, learning keys in any order", () => {
    for (const order of [hosts, [...hosts].reverse()]) {
      const directory = new HostDirectory(table, lists)
      for (const host of order) expect(factsOf(directory, host), host).toEqual(reference(host))
      // Asked again, from what it has learnt.
      for (const host of order) expect(factsOf(directory, host), host).toEqual(reference(host))
    }
  })

  it("agrees with the sources on arbitrary hosts built from their labels", () => {
    const label = fc.constantFrom(
      "mit",
      "edu",
      "ac",
      "uk",
      "cn",
      "y",
      "stu",
      "staff",
      "gmail",
      "com",
      "33mail",
      "x",
      "k12"
    )
    const directory = new HostDirectory(table, lists)
    fc.assert(
      fc.property(fc.array(label, { minLength: 1, maxLength: 5 }), (labels) => {
        const host = labels.join(".")
        expect(factsOf(directory, host)).toEqual(reference(host))
      }),
      { numRuns: 2000 }
    )
  })

  it("flattens the match for the per-email path", () => {
    const directory = new HostDirectory(table, lists)
    expect(directory.facts("cs.mdx.ac")).toMatchObject({ matchKind: "listed", matchedDomain: "mdx.ac", abused: true })
    expect(directory.facts("mit.edu")).toMatchObject({ matchKind: "listed", matchedDomain: "mit.edu", abused: false })
    expect(directory.facts("samples.com")).toMatchObject({ matchKind: "none", matchedDomain: null, abused: false })
  })

  it("keeps a domain under a bare suffix rule as a key of its own, within its bound", () => {
    const directory = new HostDirectory(table, lists, { maxLearnedKeys: 1 })
    const keys = directory.size
    expect(directory.facts("newcollege.edu").match).toMatchObject({ kind: "suffix", matchedDomain: "newcollege.edu" })
    expect(directory.size).toBe(keys + 1)
    expect(directory.facts("cs.newcollege.edu")).toBe(directory.facts("mail.newcollege.edu"))
    // Past the bound, answers stay right but are not kept.
    expect(directory.facts("a.othercollege.edu").match).toMatchObject({ matchedDomain: "othercollege.edu" })
    expect(directory.size).toBe(keys + 1)
  })

  it("answers a host under a bare suffix rule as the table does past its bound too, a .edu domain abroad included", () => {
    // `samplestech.edu` borrows the facts of its sibling at home (`samplestech.de`, see `siblings.ts`).
    const { data } = compileInstitutionIndex({
      swot: swotSnapshot([]),
      ror: rorSnapshot([
        rorV2("01aaaaa01", "Samples Institute of Technology", ["education"], {
          domains: ["samplestech.de"],
          country: "DE",
          subdivision: "BY"
        })
      ]),
      nonInstitutions: [],
      subdivisions: subdivisions()
    })
    const abroad = InstitutionTable.fromData(data)
    const hosts = ["othercollege.edu", "samplestech.edu", "students.samplestech.edu", "cs.othercollege.edu"]
    for (const maxLearnedKeys of [0, 1, 10]) {
      const directory = new HostDirectory(abroad, lists, { maxLearnedKeys })
      for (const host of [...hosts, ...hosts]) expect(directory.facts(host).match, host).toEqual(abroad.lookup(host))
    }
    expect(abroad.lookup("samplestech.edu")).toMatchObject({ rule: { summary: { country: "DE" } } })
  })

  it("remembers a derived value per facts for the last few owners that asked (an offer's groups take turns)", () => {
    const directory = new HostDirectory(table, lists)
    const facts = directory.facts("mit.edu")
    const owners = [{}, {}, {}, {}, {}, {}, {}]
    let runs = 0
    const derive = (owner: object) => ({ owner, run: ++runs })
    const value = directory.memo(facts, owners[0]!, derive)
    expect(directory.memo(directory.facts("mit.edu"), owners[0]!, derive)).toBe(value)
    // Three groups of an offer in turn: each derives once, then every turn is remembered.
    for (let round = 0; round < 3; round++) for (const owner of owners.slice(0, 3)) directory.memo(facts, owner, derive)
    expect(runs).toBe(3)
    // Six are kept (an offer's three groups, its row verdicts, a target group's job's); a seventh owner
    // pushes out the oldest of the turn-takers, never the first.
    for (const owner of owners.slice(3, 6)) directory.memo(facts, owner, derive)
    expect(runs).toBe(6)
    for (const owner of owners.slice(0, 6)) directory.memo(facts, owner, derive)
    expect(runs).toBe(6)
    directory.memo(facts, owners[6]!, derive)
    expect(runs).toBe(7)
    directory.memo(facts, owners[0]!, derive)
    expect(runs).toBe(7)
    directory.memo(facts, owners[1]!, derive)
    expect(runs).toBe(8)
    const first = owners[0]!
    // Facts that are not the directory's own are derived every time.
    const loose = { ...facts }
    expect(directory.memo(loose, first, derive)).toEqual({ owner: first, run: 9 })
    expect(directory.memo(loose, first, derive)).toEqual({ owner: first, run: 10 })
  })
})
