import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { CreateOfferRequest, OfferResource } from "../../src/api/offers.ts"
import { CreateTargetGroupRequest, TargetGroupResource } from "../../src/api/targetGroups.ts"

// How the server reads bodies: every problem, and unknown fields are problems.
const strict = { errors: "all", onExcessProperty: "error" } as const

describe("what GET returns, POST accepts back", () => {
  it("round-trips an offer, ignoring the server-set fields", () => {
    const stored = Schema.decodeUnknownSync(OfferResource)({
      id: "spring-sale",
      team: "acme",
      name: "Spring sale",
      description: "For students",
      targetGroups: ["universities", "acme-partners"],
      status: "active",
      startsAt: "2027-03-01T00:00:00+01:00",
      endsAt: "2027-06-01T00:00:00+02:00",
      effectiveStatus: "scheduled",
      source: "config"
    })
    const answered = JSON.parse(JSON.stringify(Schema.encodeSync(OfferResource)(stored)))
    const posted = Schema.decodeUnknownSync(CreateOfferRequest)(answered, strict)
    const { effectiveStatus: _status, source: _source, ...fields } = stored
    expect(posted).toMatchObject(fields)
  })

  it("round-trips a target group with every default spelled out", () => {
    const stored = Schema.decodeUnknownSync(TargetGroupResource)({
      id: "uk-students",
      name: "Students in the United Kingdom",
      criteria: {
        institutions: { countries: ["GB"] },
        domains: { allow: ["partner.samples"] },
        patterns: { deny: ["alumni.*.ac.uk"] },
        email: { rejectFreeMail: true }
      },
      examples: { valid: ["jane@ox.ac.uk"] },
      source: "api"
    })
    const answered = JSON.parse(JSON.stringify(Schema.encodeSync(TargetGroupResource)(stored)))
    expect(answered.criteria.email).toMatchObject({ rejectDisposable: true, rejectFreeMail: true })
    const posted = Schema.decodeUnknownSync(CreateTargetGroupRequest)(answered, strict)
    const { source: _source, ...fields } = stored
    expect(posted).toEqual({ ...fields, source: "api" })
  })
})
