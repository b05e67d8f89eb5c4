/** The Reviews screen's data: page addresses and pages, a score and its signals in words, the approve form's suggestions, the days as bars, the audit trail. */
import { describe, expect, it } from "vitest"
import type { CandidateSignal, InstitutionReview, ReviewList } from "../../console/src/apiTypes.ts"
import {
  approvalDraft,
  approvalRequest,
  auditLines,
  COUNTRIES,
  countryOfDomain,
  dayBars,
  domainWords,
  nameLabel,
  nearestNames,
  reviewPath,
  reviewsPageUrl,
  scorePercent,
  scoreWords,
  signalLines,
  signalName,
  suggestName,
  suggestType,
  withoutDomain,
  withReviewPage
} from "../../console/src/data/reviews.ts"
import { itAnswers } from "../support/tables.ts"

const review = (domain: string, extra: Partial<InstitutionReview> = {}): InstitutionReview => ({
  domain,
  status: "pending",
  count: 3,
  accepted: 0,
  days: [],
  firstSeen: "2026-11-20T08:00:00.000Z",
  lastSeen: "2026-11-28T09:30:00.000Z",
  candidate: { domain, score: 0.5, signals: [] },
  nearest: [],
  decisions: [],
  ...extra
})

const page = (domains: ReadonlyArray<string>, nextCursor: string | null, dropped = 0): ReviewList => ({
  data: domains.map((domain) => review(domain)),
  nextCursor,
  dropped
})

const signal = (name: string, detail: string, weight: number): CandidateSignal => ({ signal: name, detail, weight })

describe("the review queue's pages", () => {
  it("ask for a tab and an order a page at a time, the next by the previous page's cursor", () => {
    expect(reviewsPageUrl({ status: "pending", sort: "count", limit: 50 })).toBe(
      "/api/v1/institution-reviews?status=pending&sort=count&limit=50"
    )
    expect(reviewsPageUrl({ status: "rejected", sort: "recent", limit: 2 }, "a+b/=")).toBe(
      "/api/v1/institution-reviews?status=rejected&sort=recent&limit=2&cursor=a%2Bb%2F%3D"
    )
    expect(reviewPath("hfmt-hamburg.de")).toBe("/api/v1/institution-reviews/hfmt-hamburg.de")
    expect(reviewPath("hfmt-hamburg.de", "approve")).toBe("/api/v1/institution-reviews/hfmt-hamburg.de/approve")
    expect(reviewPath("a/b", "reject")).toBe("/api/v1/institution-reviews/a%2Fb/reject")
  })

  it("append each page after the domains shown, each domain once, and lose a decided domain", () => {
    const first = withReviewPage(undefined, page(["a.de", "b.de"], "c1", 4))
    expect(first.reviews.map((entry) => entry.domain)).toEqual(["a.de", "b.de"])
    expect(first.dropped).toBe(4)
    const second = withReviewPage(first, page(["b.de", "c.de"], null, 5))
    expect(second.reviews.map((entry) => entry.domain)).toEqual(["a.de", "b.de", "c.de"])
    expect(second).toMatchObject({ nextCursor: null, dropped: 5 })
    expect(withoutDomain(second, "b.de").reviews.map((entry) => entry.domain)).toEqual(["a.de", "c.de"])
  })
})

describe("a candidate in words", () => {
  itAnswers("says a score as a percentage and in words (scorePercent): %j → %j", scorePercent, [
    [0.873, "87%"],
    [0, "0%"],
    [1.2, "100%"]
  ])

  itAnswers("says a score as a percentage and in words (scoreWords): %j → %j", scoreWords, [
    [0.92, "very likely an institution"],
    [0.85, "very likely an institution"],
    [0.7, "likely an institution"],
    [0.5, "uncertain"],
    [0.2, "unlikely an institution"],
    [0.01, "very unlikely an institution"]
  ])

  it("lists the signals weightiest first, each for or against, and how strongly", () => {
    const lines = signalLines([
      signal("zone:cctld", "registered under de: a country-code top-level domain", 0.4),
      signal("family:commerce", '"shop" in hamburg-shop: a commerce word', -2.5),
      signal("family:college", '"hoch" in musikhochschule-nordheim: a college word', 2.5),
      signal("known-name", '"nordheim" is in the names of 3 known institutions in DE', 0.5),
      signal("family:technology", '"online" in cheap-degrees-online: a technology word', 0.02),
      signal("shape:hyphens", "x-y-z has several hyphens", 0),
      signal("something-new", "a signal this console does not know", -1.5)
    ])
    expect(lines.map((line) => [line.name, line.direction, line.strength])).toEqual([
      ["Word", "for", "strongly"],
      ["Word", "against", "strongly"],
      ["something-new", "against", "strongly"],
      ["Known name", "for", "clearly"],
      ["Zone", "for", "slightly"],
      ["Word", "neither", "not at all"],
      ["Shape", "neither", "not at all"]
    ])
    expect(lines[0]!.text).toBe("Speaks strongly for an institution (+2.50)")
    expect(lines[1]!.text).toBe("Speaks strongly against an institution (−2.50)")
    expect(lines[4]!.text).toBe("Speaks slightly for an institution (+0.40)")
    expect(lines[5]!.text).toBe("Says next to nothing either way (+0.02)")
    expect(lines[6]!.text).toBe("Says next to nothing either way (±0.00)")
    expect(lines[0]!.detail).toBe('"hoch" in musikhochschule-nordheim: a college word')
  })

  itAnswers("names each kind of signal the engine reports: %j → %j", signalName, [
    ["letters", "Spelling"],
    ["family:university", "Word"],
    ["zone:academic-gtld", "Zone"],
    ["place", "Place name"],
    ["known-acronym", "Known acronym"],
    ["shape:acronym", "Shape"],
    ["new-kind:x", "new-kind:x"]
  ])
})

describe("the approve form's suggestions", () => {
  itAnswers("take the country from the domain's ccTLD as the engine does: %j → %j", countryOfDomain, [
    ["hfmt-hamburg.de", "DE"],
    ["Example.AC.UK", "GB"],
    ["spbu.su", "RU"],
    ["college.edu", undefined],
    ["school.org", undefined],
    ["startup.io", undefined],
    ["ucg.ac.me", "ME"],
    ["uni.me", undefined],
    ["europa.eu", undefined],
    ["kosovo.xk", undefined],
    ["nowhere.zz", undefined],
    ["uni-lj.si.", "SI"]
  ])

  it("offer every country the API takes, by name", () => {
    expect(COUNTRIES.length).toBeGreaterThan(240)
    expect(COUNTRIES.find((country) => country.code === "DE")?.name).toBe("Germany")
    const names = COUNTRIES.map((country) => country.name)
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, "en")))
  })

  it("make a name of the domain's words, or take a nearest institution's of the same name", () => {
    expect(nameLabel("hfmt-hamburg.de")).toBe("hfmt-hamburg")
    expect(nameLabel("www.foo.ac.uk")).toBe("foo")
    expect(nameLabel("students.state-college.edu")).toBe("state-college")
    expect(nameLabel("ac.uk")).toBe("ac")
    expect(domainWords("hfmt-hamburg.de")).toBe("HFMT Hamburg")
    expect(domainWords("tu-berlin.de")).toBe("TU Berlin")
    expect(domainWords("kings_college.ac.uk")).toBe("Kings College")
    const nearest = [
      {
        id: "hfmt-koeln.de",
        name: "Hochschule für Musik und Tanz Köln",
        domain: "hfmt-koeln.de",
        country: "DE",
        type: "college" as const
      },
      { id: "x", name: null, domain: "hfmt-hamburg.com", country: null, type: "other" as const },
      {
        id: "hfmt-hamburg.at",
        name: "HfMT Hamburg (Wien)",
        domain: "hfmt-hamburg.at",
        country: "AT",
        type: "college" as const
      }
    ]
    expect(suggestName({ domain: "hfmt-hamburg.de", nearest })).toBe("HfMT Hamburg (Wien)")
    expect(suggestName({ domain: "hfmt-hamburg.de", nearest: nearest.slice(0, 2) })).toBe("HFMT Hamburg")
    expect(nearestNames({ nearest: [...nearest, nearest[0]!] })).toEqual([
      "Hochschule für Musik und Tanz Köln",
      "HfMT Hamburg (Wien)"
    ])
  })

  it("take the type the domain's words name, or university", () => {
    expect(suggestType([])).toBe("university")
    expect(suggestType([signal("zone:cctld", "registered under de", 0.5)])).toBe("university")
    expect(suggestType([signal("family:college", '"hfk" in hfk-nordstadt: a college word', 0.83)])).toBe("college")
    expect(suggestType([signal("family:arts", '"musik" in musik-x: an arts or music word', -0.02)])).toBe("college")
    expect(suggestType([signal("family:k12", '"k12" in k12-x: a school-district word', 1.5)])).toBe("school")
    expect(suggestType([signal("family:research", '"forschung" in x: a research word', 1)])).toBe("research")
    expect(suggestType([signal("family:medicine", '"med" in med-x: a medicine word', 3)])).toBe("university")
    // As the engine scores musikhochschule-nordheim.de: the "schule" of "hochschule" names no school.
    expect(
      suggestType([
        signal("letters", "musikhochschule-nordheim is spelled like institutions' domains", 2.5),
        signal("family:school", '"schule" in musikhochschule-nordheim: a school word', 1.44),
        signal("zone:cctld", "registered under de: a country-code top-level domain", 1.05),
        signal("family:college", '"hochschule" in musikhochschule-nordheim: a college word', 0.83),
        signal("family:arts", '"musik" in musikhochschule-nordheim: an arts or music word', -0.02)
      ])
    ).toBe("college")
    // The type most named wins; a tie goes to university before college, school and research.
    expect(
      suggestType([
        signal("family:university", '"uni" in uni-college-academy: a university word', 1.2),
        signal("family:college", '"college" in uni-college-academy: a college word', 0.9),
        signal("family:academy", '"academy" in uni-college-academy: an academy word', 0.5)
      ])
    ).toBe("college")
    expect(
      suggestType([
        signal("family:school", '"school" in school-uni: a school word', 2),
        signal("family:university", '"uni" in school-uni: a university word', 0.1)
      ])
    ).toBe("university")
  })

  it("start the form from the suggestions, and send only what was filled", () => {
    const draft = approvalDraft(
      review("hfmt-hamburg.de", {
        candidate: {
          domain: "hfmt-hamburg.de",
          score: 0.8,
          signals: [signal("family:college", '"hoch" in hfmt-hamburg: a college word', 2)]
        }
      })
    )
    expect(draft).toEqual({ name: "HFMT Hamburg", type: "college", country: "DE", region: "", role: "" })
    expect(approvalDraft(review("bright-minds.org")).country).toBe("")
    expect(approvalRequest({ ...draft, name: "  Hochschule für Musik und Theater Hamburg " })).toEqual({
      name: "Hochschule für Musik und Theater Hamburg",
      type: "college",
      country: "DE"
    })
    expect(approvalRequest({ ...draft, country: "", region: " de-hh ", role: "student" })).toEqual({
      name: "HFMT Hamburg",
      type: "college",
      region: "DE-HH",
      role: "student"
    })
  })
})

describe("a domain's days", () => {
  it("fill the window that ends today, quiet days as zeros, heights relative to the busiest day", () => {
    const bars = dayBars(
      [
        { day: "2026-11-20", count: 2 },
        { day: "2026-11-26", count: 4 },
        { day: "2026-11-28", count: 1 }
      ],
      "2026-11-28",
      10
    )
    expect(bars).toHaveLength(10)
    expect(bars[0]).toEqual({ day: "2026-11-19", count: 0, height: 0 })
    expect(bars[1]).toEqual({ day: "2026-11-20", count: 2, height: 0.5 })
    expect(bars[7]).toEqual({ day: "2026-11-26", count: 4, height: 1 })
    expect(bars[9]).toEqual({ day: "2026-11-28", count: 1, height: 0.25 })
    expect(dayBars([], "2026-11-28", 3).map((bar) => bar.height)).toEqual([0, 0, 0])
    expect(dayBars([{ day: "2026-10-01", count: 9 }], "2026-11-28")).toHaveLength(30)
  })
})

describe("the audit trail", () => {
  it("lists who approved or rejected which domain, when, as what or why, newest first", () => {
    const lines = auditLines([
      review("pending.de"),
      review("hfmt-hamburg.de", {
        status: "approved",
        approval: {
          domain: "hfmt-hamburg.de",
          team: "acme",
          name: "Hochschule für Musik und Theater Hamburg",
          type: "college",
          country: "DE",
          region: "DE-HH",
          approvedBy: "key_1",
          approvedAt: "2026-11-28T10:00:00.000Z"
        }
      }),
      review("cheap-degrees.com", {
        status: "rejected",
        rejection: {
          domain: "cheap-degrees.com",
          team: "acme",
          reason: "A diploma mill",
          rejectedBy: "key_2",
          rejectedAt: "2026-11-28T11:00:00.000Z"
        }
      }),
      review("institut-x.org", {
        status: "approved",
        approval: {
          domain: "institut-x.org",
          team: "acme",
          name: "Institut X",
          type: "research",
          country: null,
          region: null,
          role: "staff",
          approvedBy: "key_1",
          approvedAt: "2026-11-27T10:00:00.000Z"
        }
      })
    ])
    expect(lines).toEqual([
      {
        domain: "cheap-degrees.com",
        decision: "rejected",
        by: "key_2",
        at: "2026-11-28T11:00:00.000Z",
        text: "A diploma mill"
      },
      {
        domain: "hfmt-hamburg.de",
        decision: "approved",
        by: "key_1",
        at: "2026-11-28T10:00:00.000Z",
        text: 'as "Hochschule für Musik und Theater Hamburg", a college in Germany (DE), region DE-HH'
      },
      {
        domain: "institut-x.org",
        decision: "approved",
        by: "key_1",
        at: "2026-11-27T10:00:00.000Z",
        text: 'as "Institut X", a research institution serving staff'
      }
    ])
  })
})
