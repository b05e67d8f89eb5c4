/**
 * A result explained per criterion: what passed and why, what failed (the
 * result's reason), what the group does not use, what was not reached, and
 * the institution found whatever the group asks.
 */
import { describe, expect, it } from "vitest"
import { ExplainedCriterion } from "../../../src/domain/Explanation.ts"
import { InvalidConfiguration } from "../../../src/domain/errors.ts"
import type { TargetGroupInput } from "../../../src/domain/TargetGroup.ts"
import { makeEngine } from "../../../src/engine/makeEngine.ts"
import { explainResult } from "../../../src/engine/targeting/explainResult.ts"
import { fixtureContext } from "../../fixtures.ts"

const context = fixtureContext()

const explain = (criteria: TargetGroupInput["criteria"], email: string) => {
  const engine = makeEngine(context, { targetGroups: [{ id: "g", name: "g", criteria }] })
  if (engine instanceof InvalidConfiguration) throw engine
  const result = engine.validate(email, "g")
  const explanation = explainResult(engine.targetGroups.get("g")!, context, result)
  const byCriterion = Object.fromEntries(explanation.criteria.map((entry) => [entry.criterion, entry]))
  return { result, explanation, byCriterion }
}

const outcomes = (byCriterion: Record<string, { outcome: string }>) =>
  Object.fromEntries(Object.entries(byCriterion).map(([criterion, entry]) => [criterion, entry.outcome]))

describe("explainResult", () => {
  it("explains a pass of every criterion the group uses, in the order of validationDetails", () => {
    const { explanation, byCriterion } = explain(
      { institutions: { countries: ["US"], types: ["university"] }, domains: { deny: ["blocked.samples.edu"] } },
      "jane@mit.edu"
    )
    expect(explanation.criteria.map((entry) => entry.criterion)).toEqual(ExplainedCriterion.literals)
    expect(outcomes(byCriterion)).toEqual({
      format: "pass",
      domain: "pass",
      geography: "pass",
      organisationType: "pass",
      customList: "pass",
      emailPolicy: "pass"
    })
    expect(byCriterion.domain!.detail).toBe(
      "mit.edu is Massachusetts Institute of Technology (a listed domain), serving students and staff alike."
    )
    expect(byCriterion.geography!.detail).toBe("US is among those accepted (US).")
    expect(byCriterion.organisationType!.detail).toBe("A university is among the types accepted (university).")
    expect(explanation.institution).toMatchObject({
      name: "Massachusetts Institute of Technology",
      country: "US",
      matchedDomain: "mit.edu",
      rule: "listed-domain",
      role: "mixed"
    })
    expect(explanation.organization).toBeNull()
  })

  it("gives the failed criterion the result's reason, marks what was not reached, and still names the institution", () => {
    const { result, byCriterion, explanation } = explain(
      { institutions: { countries: ["GB"], regions: ["GB-ENG"], types: ["school"] } },
      "jane@tum.de"
    )
    expect(result.reasonCode).toBe("ORGANIZATION_TYPE_NOT_ALLOWED")
    expect(outcomes(byCriterion)).toMatchObject({
      domain: "pass",
      organisationType: "fail",
      geography: "not-applicable",
      customList: "not-applicable"
    })
    expect(byCriterion.organisationType!.detail).toBe(result.reason)
    expect(byCriterion.geography!.detail).toMatch(/^Not checked/)
    expect(byCriterion.customList!.detail).toBe("The target group has no domain lists or patterns.")
    expect(explanation.institution).toMatchObject({ name: "Technische Universität München", region: "DE-BY" })
  })

  it("says which criteria a group does not use", () => {
    const { byCriterion } = explain({ domains: { allow: ["partner.samples.com"] } }, "kim@partner.samples.com")
    expect(outcomes(byCriterion)).toMatchObject({ domain: "not-applicable", customList: "pass" })
    expect(byCriterion.domain!.detail).toBe("The target group does not ask for an academic institution.")
    expect(byCriterion.customList!.detail).toBe(
      'Allowed by the target group\'s domains.allow entry "partner.samples.com".'
    )
    expect(byCriterion.geography!.detail).toBe("The target group accepts any country and region.")
  })

  it("explains an email-policy refusal, and a flag the group accepts", () => {
    const disposable = explain({ institutions: {} }, "x@mailinator.com")
    expect(disposable.result.reasonCode).toBe("DISPOSABLE_EMAIL")
    expect(outcomes(disposable.byCriterion)).toMatchObject({ emailPolicy: "fail", domain: "not-applicable" })
    expect(disposable.byCriterion.emailPolicy!.detail).toBe(disposable.result.reason)
    expect(disposable.byCriterion.domain!.detail).toMatch(/^Not checked/)
    expect(disposable.explanation.institution).toBeNull()
    const freeMail = explain({ domains: { allow: ["gmail.com"] } }, "jane@gmail.com")
    expect(freeMail.result.isValid).toBe(true)
    expect(freeMail.byCriterion.emailPolicy).toEqual({
      criterion: "emailPolicy",
      outcome: "pass",
      detail: "Flagged as free mail, which this target group accepts."
    })
  })

  it("names the organisation a non-institution host belongs to", () => {
    const { explanation, byCriterion } = explain({ institutions: {} }, "someone@net.ac.uk")
    expect(byCriterion.domain!.outcome).toBe("fail")
    expect(explanation.institution).toBeNull()
    expect(explanation.organization).toMatchObject({ kind: "research-network", name: "A research network" })
  })

  it("explains a malformed address: format fails, nothing else reached", () => {
    const { byCriterion } = explain({ institutions: {} }, "a..b@mit.edu")
    expect(outcomes(byCriterion)).toEqual({
      format: "fail",
      domain: "not-applicable",
      geography: "not-applicable",
      organisationType: "not-applicable",
      customList: "not-applicable",
      emailPolicy: "not-applicable"
    })
  })
})
