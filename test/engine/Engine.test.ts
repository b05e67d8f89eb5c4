import { describe, expect, it } from "vitest"
import { InvalidConfiguration, OfferNotFound, TargetGroupNotFound } from "../../src/domain/errors.ts"
import type { OfferInput } from "../../src/domain/Offer.ts"
import type { Engine } from "../../src/engine/Engine.ts"
import { type EngineResources, makeEngine } from "../../src/engine/makeEngine.ts"
import { fixtureContext } from "../fixtures.ts"

const context = fixtureContext()
const day = 24 * 60 * 60 * 1000
const now = Date.parse("2026-11-21T12:00:00Z")

const targetGroups = [
  { id: "us-students", name: "US students", criteria: { institutions: { countries: ["US"] } } },
  { id: "uk-students", name: "UK students", team: "acme", criteria: { institutions: { countries: ["GB"] } } },
  { id: "other-team", name: "Other team's", team: "globex", criteria: { institutions: {} } }
]

const offer = (overrides: Partial<OfferInput> = {}): OfferInput => ({
  id: "student-discount",
  team: "acme",
  name: "Student discount",
  targetGroups: ["us-students", "uk-students"],
  status: "active",
  ...overrides
})

const build = (resources: EngineResources): Engine | InvalidConfiguration => makeEngine(context, resources, () => now)

const engineWith = (...offers: Array<OfferInput>): Engine => {
  const engine = build({ targetGroups, offers })
  if (engine instanceof InvalidConfiguration) throw engine
  return engine
}

describe("offers", () => {
  it("is eligible when any of its target groups matches, and says which", () => {
    const result = engineWith(offer()).validateOffer("a@ox.ac.uk", "student-discount")
    expect(result).toMatchObject({
      isValid: true,
      offer: { id: "student-discount", name: "Student discount", status: "active" },
      matchedTargetGroups: ["uk-students"]
    })
    expect(result.results.map((r) => r.isValid)).toEqual([false, true])
  })

  it("explains a failure with the shared reason code when every group fails the same way", () => {
    const result = engineWith(offer()).validateOffer("a@samples.com", "student-discount")
    expect(result).toMatchObject({ isValid: false, reasonCode: "UNKNOWN_INSTITUTION", matchedTargetGroups: [] })
    const mixed = engineWith(offer()).validateOffer("a@tum.de", "student-discount")
    expect(mixed.reasonCode).toBe("COUNTRY_NOT_ALLOWED")
  })

  it.each([
    ["draft", {}, "draft"],
    ["paused", {}, "paused"],
    ["archived", {}, "archived"],
    ["active", { startsAt: new Date(now + day).toISOString() }, "scheduled"],
    ["active", { endsAt: new Date(now - day).toISOString() }, "expired"]
  ] as const)("a %s offer with window %j is %s: a failed result, not an error", (status, window, effective) => {
    const result = engineWith(offer({ status, ...window })).validateOffer("a@mit.edu", "student-discount")
    expect(result).toMatchObject({ isValid: false, reasonCode: "OFFER_NOT_ACTIVE", offer: { status: effective } })
  })

  it("is active inside its window", () => {
    const window = { startsAt: new Date(now - day).toISOString(), endsAt: new Date(now + day).toISOString() }
    expect(engineWith(offer(window)).validateOffer("a@mit.edu", "student-discount").isValid).toBe(true)
  })

  it("validates many emails in input order", () => {
    const results = engineWith(offer()).validateManyOffer(["a@mit.edu", "bad", "a@samples.com"], "student-discount")
    expect(results.map((r) => r.isValid)).toEqual([true, false, false])
    expect(results[1]!.reasonCode).toBe("INVALID_EMAIL_FORMAT")
  })
})

describe("configuration checks", () => {
  const problems = (resources: EngineResources) => {
    const result = build(resources)
    expect(result).toBeInstanceOf(InvalidConfiguration)
    return (result as InvalidConfiguration).problems
  }

  it("reports a dangling target-group reference with its path", () => {
    expect(problems({ targetGroups, offers: [offer({ targetGroups: ["nope"] })] })).toEqual([
      { path: "offers[0].targetGroups[0]", message: 'there is no target group "nope"' }
    ])
  })

  it("reports a target group of another team", () => {
    expect(problems({ targetGroups, offers: [offer({ targetGroups: ["other-team"] })] })[0]!.message).toContain(
      'belongs to team "globex"'
    )
  })

  it("reports duplicate ids", () => {
    expect(problems({ targetGroups: [targetGroups[0]!, targetGroups[0]!] })).toEqual([
      { path: "targetGroups[1].id", message: 'duplicate id "us-students"' }
    ])
  })

  it("reports unknown keys, wrong types and bad country codes with their paths", () => {
    const found = problems({
      targetGroups: [
        { id: "a", name: "A", criteria: { institutions: { countries: ["UK"] } } },
        { id: "b", name: "B", criteria: { institutions: {} }, extra: true },
        { id: "c", name: 3, criteria: {} }
      ]
    })
    expect(found.find((p) => p.path === "targetGroups[0].criteria.institutions.countries[0]")?.message).toContain(
      '"GB"'
    )
    expect(found.some((p) => p.path.startsWith("targetGroups[1]"))).toBe(true)
    expect(found.some((p) => p.path === "targetGroups[2].name")).toBe(true)
  })
})

describe("unknown ids", () => {
  it("throws typed errors", () => {
    const engine = engineWith(offer())
    expect(() => engine.validate("a@mit.edu", "nope")).toThrow(TargetGroupNotFound)
    expect(() => engine.validateOffer("a@mit.edu", "nope")).toThrow(OfferNotFound)
  })
})
