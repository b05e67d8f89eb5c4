import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { perGroupOffer } from "../../../bench/perGroupOffer.ts"
import { InvalidConfiguration } from "../../../src/domain/errors.ts"
import type { OfferInput } from "../../../src/domain/Offer.ts"
import type { TargetGroupInput } from "../../../src/domain/TargetGroup.ts"
import type { Engine } from "../../../src/engine/Engine.ts"
import { type EngineResources, makeEngine } from "../../../src/engine/makeEngine.ts"
import type { EngineContext } from "../../../src/engine/targeting/EngineContext.ts"
import { evaluateOffer } from "../../../src/engine/targeting/evaluateOffer.ts"
import { fixtureContext } from "../../fixtures.ts"

// One context for every run: the host directory learns keys and remembers verdicts across runs, as in a daemon.
const context = fixtureContext()
const now = Date.parse("2026-06-01T00:00:00Z")

const locals = ["jane", "Jane.Doe", "admin", "info", "no-reply", '"jane doe"', "a..b", "x+tag", "zoë"]
const hosts = [
  // listed, sub-domains of listed (role labels), stoplisted, abused
  "mit.edu",
  "MIT.EDU",
  "cs.mit.edu",
  "alumni.mit.edu",
  "staff.mit.edu",
  "students.ox.ac.uk",
  "ox.ac.uk",
  "x.edu.cn",
  "stu.y.edu.cn",
  "y.edu.cn",
  "tum.de",
  "springfield-high.org",
  "mdx.ac",
  "umb.edu.co",
  "academia.umb.edu.co",
  // suffix rules only, non-institutions
  "newcollege.edu",
  "alumni.newcollege.edu",
  "poly.ac.uk",
  "school.k12.ca.us",
  "net.ac.uk",
  "council.ac.uk",
  "ministry.edu.cn",
  "platform.edu",
  // free mail, disposable, custom lists, nothing known
  "gmail.com",
  "yahoo.com",
  "mailinator.com",
  "10minutemail.com",
  "me.33mail.com",
  "samples.com",
  "partner.samples.com",
  "uni.samples.edu",
  "lab.uni.samples.edu",
  "samples.test",
  "localhost",
  "[127.0.0.1]",
  // international: a look-alike of a listed domain (Cyrillic і), and a plain one
  "mіt.edu",
  "müller-universität.de"
]

const email = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.tuple(fc.constantFrom(...locals), fc.constantFrom(...hosts)).map(([l, h]) => `${l}@${h}`)
  },
  { weight: 1, arbitrary: fc.constantFrom("", "no-at-sign", "two@@ats.edu", "jane@", "@mit.edu", "dot.@mit.edu") }
)

const subset = <A>(values: ReadonlyArray<A>) => fc.subarray([...values], { minLength: 1 })

const institutions = fc.record(
  {
    types: subset(["university", "college", "school", "research", "other"] as const),
    countries: subset(["US", "GB", "CN", "DE", "CO"]),
    regions: fc.constant(["DE-BY"]),
    roles: subset(["student", "staff", "alumni", "mixed"] as const),
    includeSuffixRules: fc.boolean()
  },
  { requiredKeys: [] }
)

const criteria: fc.Arbitrary<TargetGroupInput["criteria"]> = fc.record(
  {
    institutions,
    domains: fc.record({
      allow: fc.subarray(["samples.com", "partner.samples.com", "gmail.com", "mit.edu"]),
      deny: fc.subarray(["partner.samples.com", "cs.mit.edu", "tum.de"])
    }),
    patterns: fc.record({
      allow: fc.subarray(["*.samples.edu", "*.samples.com", "*.ac.uk"]),
      deny: fc.subarray(["lab.*.samples.edu", "*.mit.edu"])
    }),
    email: fc.record(
      {
        rejectDisposable: fc.boolean(),
        rejectRoleAccounts: fc.boolean(),
        rejectFreeMail: fc.boolean(),
        rejectAbused: fc.boolean(),
        rejectConfusable: fc.boolean(),
        allowQuotedLocalPart: fc.boolean(),
        allowIpLiteral: fc.boolean(),
        allowSpecialUseDomains: fc.boolean()
      },
      { requiredKeys: [] }
    )
  },
  { requiredKeys: [] }
)

/** Up to five target groups and offers of one to four of them (any order), some of them not active. */
const resources = fc
  .array(criteria, { minLength: 1, maxLength: 5 })
  .chain((groups) => {
    const ids = groups.map((_, i) => `g${i}`)
    const offer = fc.record({
      targetGroups: fc.shuffledSubarray(ids, { minLength: 1, maxLength: Math.min(4, ids.length) }),
      status: fc.constantFrom("active", "active", "active", "paused" as const)
    })
    return fc.tuple(fc.constant(groups), fc.array(offer, { minLength: 1, maxLength: 3 }))
  })
  .map(([groups, offers]) => ({
    targetGroups: groups.map((criteria, i): TargetGroupInput => ({ id: `g${i}`, name: `G${i}`, criteria })),
    offers: offers.map((offer, i): OfferInput => ({ id: `o${i}`, team: "acme", name: `O${i}`, ...offer }))
  }))

const engineOn = (on: EngineContext, input: EngineResources): Engine => {
  const engine = makeEngine(on, input)
  if (engine instanceof InvalidConfiguration) throw new Error(JSON.stringify(engine.problems))
  return engine
}

describe("evaluateOffer", () => {
  // The engine runs on the shared context; the reference on a fresh one, so that what a host's facts
  // remember across groups and runs (`HostDirectory.memo`) cannot make both wrong alike.
  it("answers as each target group evaluated on its own, combined, for any email and offer", () => {
    fc.assert(
      fc.property(resources, fc.array(email, { minLength: 1, maxLength: 12 }), (input, emails) => {
        const engine = engineOn(context, input)
        const reference = engineOn(fixtureContext(), input)
        for (const address of emails) {
          for (const [offerId, offer] of engine.offers) {
            const expected = perGroupOffer(reference.offers.get(offerId)!, reference.context, address, now)
            expect(evaluateOffer(offer, engine.context, address, now)).toEqual(expected)
          }
        }
      }),
      { numRuns: 300 }
    )
  })

  it("states a reason several groups share once, after those groups' ids", () => {
    const institutions = { institutions: { types: ["university" as const] } }
    const engine = makeEngine(context, {
      targetGroups: [
        { id: "unis", name: "Unis", criteria: institutions },
        { id: "partners", name: "Partners", criteria: { domains: { allow: ["samples.com"] } } },
        { id: "more-unis", name: "More unis", criteria: institutions }
      ],
      offers: [{ id: "o", team: "acme", name: "O", status: "active", targetGroups: ["unis", "partners", "more-unis"] }]
    })
    if (engine instanceof InvalidConfiguration) throw engine
    const result = evaluateOffer(engine.offers.get("o")!, engine.context, "jane@nowhere-known.org", now)
    expect(result.reasonCode).toBe("NO_TARGET_GROUP_MATCHED")
    expect(result.reason).toMatch(
      /^No target group of the offer matched: unis, more-unis: nowhere-known\.org is not a known academic institution\. As a likely institution nowhere-known\.org scores [0-9.]+\. partners: nowhere-known\.org is not on the target group's domain lists or patterns\.$/
    )
  })

  it("judges groups that parse differently on their own parse", () => {
    const engine = makeEngine(context, {
      targetGroups: [
        { id: "strict", name: "Strict", criteria: { domains: { allow: ["samples.com"] } } },
        {
          id: "quoted",
          name: "Quoted",
          criteria: { domains: { allow: ["samples.com"] }, email: { allowQuotedLocalPart: true } }
        }
      ],
      offers: [{ id: "o", team: "acme", name: "O", status: "active", targetGroups: ["strict", "quoted", "strict"] }]
    })
    if (engine instanceof InvalidConfiguration) throw engine
    const result = evaluateOffer(engine.offers.get("o")!, engine.context, '"jane doe"@samples.com', now)
    expect(result.matchedTargetGroups).toEqual(["quoted"])
    expect(result.results.map((r) => r.reasonCode)).toEqual(["INVALID_EMAIL_FORMAT", undefined, "INVALID_EMAIL_FORMAT"])
  })
})
