import { describe, expect, it } from "vitest"
import { decodeOffers, decodeTargetGroups } from "../../../src/domain/decodeResources.ts"
import type { ReviewedInstitution } from "../../../src/domain/InstitutionReview.ts"
import { Engine } from "../../../src/engine/Engine.ts"
import { fixtureContext, reviewedFixture } from "../../fixtures.ts"

const context = fixtureContext()
const approved = reviewedFixture

const engine = (reviewed: ReadonlyArray<ReviewedInstitution>) => {
  const problems: Array<never> = []
  return Engine.make({
    context,
    reviewed,
    targetGroups: decodeTargetGroups(
      [
        { id: "acme-colleges", name: "Acme", team: "acme", criteria: { institutions: { types: ["college"] } } },
        { id: "globex-all", name: "Globex", team: "globex", criteria: { institutions: {} } },
        { id: "shared", name: "Shared", criteria: { institutions: { countries: ["DE"] } } }
      ],
      problems
    ),
    offers: decodeOffers(
      [{ id: "acme-offer", name: "Acme offer", team: "acme", status: "active", targetGroups: ["shared"] }],
      problems
    )
  })
}

describe("reviewed institutions", () => {
  const withApproval = engine([approved])

  it("are institutions for the approving team's targets, with the approval as evidence", () => {
    const result = withApproval.validate("jane@stu.newschool-sampleburg.de", "acme-colleges")
    expect(result).toMatchObject({
      isValid: true,
      matchedDomain: "newschool-sampleburg.de",
      validationDetails: {
        domain: {
          rule: "listed-domain",
          institution: {
            name: "Neue Schule Sampleburg",
            type: "college",
            country: "DE",
            sources: [{ dataset: "campusgate-reviewed" }],
            evidence: { type: { confidence: "high", rule: "approved-by:key_reviewer01@2026-11-29T02:00:00.000Z" } }
          }
        }
      }
    })
    expect(withApproval.validateOffer("jane@newschool-sampleburg.de", "acme-offer").isValid).toBe(true)
    // A shared group, validated by the approving team, sees it.
    expect(withApproval.validate("jane@newschool-sampleburg.de", "shared", "acme").isValid).toBe(true)
  })

  it("are nothing to any other team", () => {
    expect(withApproval.validate("jane@newschool-sampleburg.de", "globex-all")).toMatchObject({
      isValid: false,
      reasonCode: "UNKNOWN_INSTITUTION"
    })
    expect(withApproval.validate("jane@newschool-sampleburg.de", "shared", "globex").isValid).toBe(false)
    expect(withApproval.validate("jane@newschool-sampleburg.de", "shared").isValid).toBe(false)
  })

  it("leave every other host to the shared data", () => {
    expect(withApproval.validate("jane@ox.ac.uk", "acme-colleges").validationDetails.domain).toMatchObject({
      rule: "listed-domain"
    })
    expect(engine([]).validate("jane@newschool-sampleburg.de", "acme-colleges").isValid).toBe(false)
  })
})
