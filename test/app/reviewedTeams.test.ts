import { describe, expect, it } from "vitest"
import { makeValidation } from "../../src/app/ValidationService.ts"
import { decodeOffers, decodeTargetGroups } from "../../src/domain/decodeResources.ts"
import { ALL_TEAMS } from "../../src/domain/visibility.ts"
import { Engine } from "../../src/engine/Engine.ts"
import { fixtureContext, reviewedFixture } from "../fixtures.ts"

const approved = reviewedFixture

const problems: Array<never> = []
const engine = Engine.make({
  context: fixtureContext(),
  reviewed: [approved],
  targetGroups: decodeTargetGroups([{ id: "shared", name: "Shared", criteria: { institutions: {} } }], problems),
  offers: decodeOffers([], problems)
})
const validation = makeValidation(
  { current: () => ({ engine }) },
  { record: () => undefined, recordMany: () => undefined },
  { validated: () => undefined, validatedAll: () => undefined }
)

describe("a team's reviewed institutions, through the validation service", () => {
  it("count in every way the team validates against a shared group: one, many, and a job's rows", () => {
    const email = "jane@newschool-sampleburg.de"
    expect(validation.targetGroup("acme", email, "shared")).toMatchObject({ isValid: true })
    expect(validation.manyTargetGroup("acme", [email], "shared")).toMatchObject([{ isValid: true }])
    expect(validation.rowVerdicts("acme", { targetGroupId: "shared" }, [email])).toMatchObject([{ isValid: true }])
  })

  it("count for no other team, nor for a caller of every team's", () => {
    const email = "jane@newschool-sampleburg.de"
    expect(validation.targetGroup("globex", email, "shared")).toMatchObject({ isValid: false })
    expect(validation.rowVerdicts("globex", { targetGroupId: "shared" }, [email])).toMatchObject([{ isValid: false }])
    expect(validation.rowVerdicts(ALL_TEAMS, { targetGroupId: "shared" }, [email])).toMatchObject([{ isValid: false }])
  })
})
