import { execFileSync, spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import {
  createCampusgate,
  ExplainedCriterion,
  InvalidConfiguration,
  OfferNotFound,
  type OutgoingMail,
  parseDomain,
  parseEmail,
  TargetGroupNotFound,
  verifyEligibilityToken,
  WrongCode
} from "../src/index.ts"
import { signCallback } from "../src/webhooks/signature.ts"

describe("the email syntax the docs describe", () => {
  it("is exported as docs/email-policy.md names it: parseEmail, parseDomain, canonicalAddress", async () => {
    expect(parseEmail("Jane@OX.ac.uk")).toMatchObject({ ok: true })
    expect(parseDomain("ox.ac.uk")).toMatchObject({ ok: true })
    expect(parseDomain("ex_ample.com")).toMatchObject({ ok: false, reason: "INVALID_DOMAIN" })
    const api = await import("../src/index.ts")
    for (const name of ["parseEmail", "parseDomain", "canonicalAddress"])
      expect(typeof api[name as keyof typeof api]).toBe("function")
  })
})

describe("createCampusgate (built-in data)", () => {
  it("validates against target groups and offers synchronously, and can be reloaded", async () => {
    const cg = await createCampusgate({
      targetGroups: [{ id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } }],
      offers: [{ id: "o", team: "acme", name: "Offer", targetGroups: ["uk"], status: "active" }]
    })
    expect(cg.validate("a@ox.ac.uk", "uk")).toMatchObject({ isValid: true, matchedDomain: "ox.ac.uk" })
    expect(cg.validate("a@cam.ac.uk", "uk").validationDetails.domain.institution?.name).toContain("Cambridge")
    expect(cg.validate("a@mit.edu", "uk").reasonCode).toBe("COUNTRY_NOT_ALLOWED")
    expect(cg.validateOffer("a@ox.ac.uk", "o").matchedTargetGroups).toEqual(["uk"])
    expect(cg.validateMany(["a@ox.ac.uk", "x"], { offerId: "o" }).map((r) => r.isValid)).toEqual([true, false])
    expect(() => cg.validateOffer("a@ox.ac.uk", "missing")).toThrow(OfferNotFound)
    expect(await cg.usage("o")).toMatchObject({
      validations: 3,
      eligible: 2,
      ineligible: 1,
      ineligibleByReason: { INVALID_EMAIL_FORMAT: 1 },
      matchesByTargetGroup: { uk: 2 },
      uniqueEmails: { estimate: 1 }
    })
    expect((await cg.usage("never")).lastValidatedAt).toBeNull()

    await expect(
      cg.reload({ targetGroups: [{ id: "uk", name: "UK", criteria: { institutions: { countries: ["XX"] } } }] })
    ).rejects.toBeInstanceOf(InvalidConfiguration)
    expect(cg.validate("a@ox.ac.uk", "uk").isValid).toBe(true)
    await cg.reload({ targetGroups: [{ id: "uk", name: "US now", criteria: { institutions: { countries: ["US"] } } }] })
    expect(cg.validate("a@mit.edu", "uk").isValid).toBe(true)
    await cg.close()
  })

  it("takes a target as validateMany does, and says what is wrong with a target of another shape", async () => {
    const cg = await createCampusgate({
      targetGroups: [{ id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } }],
      offers: [{ id: "o", team: "acme", name: "Offer", targetGroups: ["uk"], status: "active" }]
    })
    expect(cg.validate("a@ox.ac.uk", { targetGroupId: "uk" })).toEqual(cg.validate("a@ox.ac.uk", "uk"))
    expect(cg.validate("a@ox.ac.uk", { offerId: "o" })).toEqual(cg.validateOffer("a@ox.ac.uk", "o"))
    expect(() => cg.validate("a@ox.ac.uk", { offerId: "missing" })).toThrow(OfferNotFound)
    expect(() => cg.validate("a@ox.ac.uk", { targetGroupId: "missing" })).toThrow(TargetGroupNotFound)
    const untyped = cg as unknown as Record<"validate" | "validateMany", (...args: Array<unknown>) => unknown>
    expect(() => untyped.validate("a@ox.ac.uk", { offerId: "o" }, { explain: true })).toThrow(
      "validate: explain is for a target group, not an offer."
    )
    for (const wrong of [undefined, 7, { id: "uk" }, { offerId: 1 }, { offerId: "o", targetGroupId: "uk" }]) {
      expect(() => untyped.validate("a@ox.ac.uk", wrong)).toThrow(TypeError)
      expect(() => untyped.validateMany(["a@ox.ac.uk"], wrong)).toThrow(TypeError)
    }
    expect(() => untyped.validate("a@ox.ac.uk", { id: "uk" })).toThrow(
      'validate: the target must be a target group\'s id, { targetGroupId: string } or { offerId: string }; got {"id":"uk"}.'
    )
    await cg.close()
  })

  it("explains a target-group result per criterion on request, as explain: true does over HTTP", async () => {
    const cg = await createCampusgate({
      targetGroups: [{ id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } }]
    })
    const plain = cg.validate("bob@mit.edu", "uk")
    const { explanation, ...result } = cg.validate("bob@mit.edu", "uk", { explain: true })
    expect(result).toEqual(plain)
    expect(explanation.criteria.map((entry) => entry.criterion)).toEqual(ExplainedCriterion.literals)
    expect(explanation.criteria.find((entry) => entry.criterion === "geography")).toEqual({
      criterion: "geography",
      outcome: "fail",
      detail: plain.reason
    })
    expect(explanation.institution).toMatchObject({ country: "US", matchedDomain: "mit.edu" })
    expect(cg.validate("bob@mit.edu", "uk", { explain: false })).toEqual(plain)
    expect(() => cg.validate("bob@mit.edu", "missing", { explain: true })).toThrow(TargetGroupNotFound)
    await cg.close()
  })

  it("verifies in memory: a code sent through `send`, wrong codes rejected with their reason", async () => {
    const sent: Array<OutgoingMail> = []
    const cg = await createCampusgate({
      targetGroups: [{ id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } }],
      offers: [{ id: "o", team: "acme", name: "Offer", targetGroups: ["uk"], status: "active" }],
      verification: { send: async (mail) => void sent.push(mail) }
    })
    expect(await cg.verifications.start({ email: "bob@mit.edu", offerId: "o" })).toMatchObject({
      ineligible: { isValid: false }
    })
    const started = await cg.verifications.start({ email: "jane@ox.ac.uk", offerId: "o" })
    const id = "started" in started ? started.started.id : ""
    while (sent.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    const code = /^\s*(\d{6})\s*$/m.exec(sent[0]!.text)![1]!
    await expect(cg.verifications.confirm(id, code === "000000" ? "111111" : "000000")).rejects.toBeInstanceOf(
      WrongCode
    )
    const verified = await cg.verifications.confirm(id, code)
    const claims = await verifyEligibilityToken(verified.eligibility!.token, {
      jwks: await cg.verifications.jwks(),
      offerId: "o"
    })
    expect(claims.institution?.name).toBe("University of Oxford")
    expect(await cg.usage("o")).toMatchObject({ verifications: { started: 1, messagesSent: 1, verified: 1 } })
    await cg.close()
  })

  it("rejects invalid configuration with every problem and its path", async () => {
    const error = await createCampusgate({
      targetGroups: [{ id: "a", name: "A", criteria: { institutions: { countries: ["UK"] } } }],
      offers: [{ id: "o", team: "acme", name: "O", targetGroups: ["b"], status: "active" }]
    }).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InvalidConfiguration)
    expect((error as InvalidConfiguration).problems[0]).toEqual({
      path: "targetGroups[0].criteria.institutions.countries[0]",
      message: '"UK" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)'
    })
  })

  it("words a mistyped key or status as the config files do, with what was meant", async () => {
    // As a JavaScript caller, whom no type checker warns, would pass them.
    const options = {
      targetGroups: [{ id: "a", name: "A", criteria: { email: { rejectRoleAcounts: true } } }],
      offers: [{ id: "o", team: "acme", name: "O", targetGroups: ["a"], status: "activ" }]
    } as unknown as Parameters<typeof createCampusgate>[0]
    const error = await createCampusgate(options).catch((e: unknown) => e)
    expect((error as InvalidConfiguration).problems).toEqual([
      {
        path: "targetGroups[0].criteria.email.rejectRoleAcounts",
        message: 'unknown key "rejectRoleAcounts" (did you mean "rejectRoleAccounts"?)'
      },
      {
        path: "offers[0].status",
        message: 'expected one of "draft", "active", "paused", "archived", got "activ" (did you mean "active"?)'
      }
    ])
  })
})

describe("examples", () => {
  it("examples/library.ts runs against the built package", () => {
    const output = execFileSync(process.execPath, [fileURLToPath(new URL("../examples/library.ts", import.meta.url))], {
      encoding: "utf8"
    })
    expect(output).toContain('jane@ox.ac.uk: {"isValid":true,"matchedDomain":"ox.ac.uk"}')
    expect(output).toContain('"reasonCode":"COUNTRY_NOT_ALLOWED"')
    expect(output).toContain('inspect mit.ed: "mit.edu"')
  })

  it("examples/merchant-backend.ts verifies a token offline and refuses a wrong offer, another team and a tampered token", () => {
    const output = execFileSync(
      process.execPath,
      [fileURLToPath(new URL("../examples/merchant-backend.ts", import.meta.url))],
      { encoding: "utf8" }
    )
    const lines = output.trim().split("\n")
    expect(lines[0]).toMatch(
      /^eligible: offer spring-sale, University of Oxford \(GB\), person .{8}…, until \d{4}-\d\d-\d\d$/
    )
    expect(lines[1]).toMatch(/^refused: wrong-offer/)
    expect(lines[2]).toMatch(/^refused: wrong-team/)
    expect(lines[3]).toMatch(/^refused: invalid/)
  })

  it("examples/webhook-receiver.ts accepts a signed callback and refuses an unsigned one", async () => {
    const secret = "example-secret"
    const receiver = spawn(
      process.execPath,
      [fileURLToPath(new URL("../examples/webhook-receiver.ts", import.meta.url)), "0"],
      { env: { ...process.env, CAMPUSGATE_WEBHOOK_SECRET: secret }, stdio: ["ignore", "pipe", "inherit"] }
    )
    try {
      const lines = createInterface({ input: receiver.stdout! })[Symbol.asyncIterator]()
      const url = String((await lines.next()).value).split(" at ")[1]!
      const body = JSON.stringify({ jobId: "job_1", status: "completed", total: 2, counts: { valid: 1 } })
      const signature = signCallback(secret, Math.floor(Date.now() / 1000), body)
      const signed = await fetch(url, { method: "POST", headers: { "campusgate-signature": signature }, body })
      expect(signed.status).toBe(204)
      expect(String((await lines.next()).value)).toBe('job_1 completed: {"valid":1}')
      const unsigned = await fetch(url, { method: "POST", body })
      expect(unsigned.status).toBe(401)
    } finally {
      receiver.kill()
    }
  })
})
