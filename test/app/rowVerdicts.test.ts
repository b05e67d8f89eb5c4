import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { HostNumbers } from "../../src/app/HostNumbers.ts"
import { keptHosts, offerRowVerdicts, targetGroupRowVerdicts } from "../../src/app/rowVerdicts.ts"
import { LiveSnapshot } from "../../src/app/Snapshot.ts"
import { resourcesSource } from "../../src/app/sources.ts"
import { Validation, ValidationCounters } from "../../src/app/Validation.ts"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import { jsonString } from "../../src/domain/jsonText.ts"
import { toOfferResultRow, toResultRow } from "../../src/domain/ResultRow.ts"
import { rowText, SharedVerdict, verdictText } from "../../src/domain/rowText.ts"
import { ALL_TEAMS } from "../../src/domain/visibility.ts"
import { evaluateOffer } from "../../src/engine/targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "../../src/engine/targeting/evaluateTargetGroup.ts"
import { PlainHashes } from "../../src/jobs/duplicates.ts"
import { emailLine } from "../../src/jobs/inputLines.ts"
import { encodeBatch } from "../../src/jobs/jobBatches.ts"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { usageTally } from "../../src/stats/UsageRecorder.ts"

/** Inside the windowed offer's dates. */
const now = Date.parse("2026-12-01T12:00:00Z")

const resources = {
  targetGroups: [
    { id: "uk", name: "UK", criteria: { institutions: { countries: ["GB"] }, email: { rejectRoleAccounts: true } } },
    { id: "unis", name: "Universities", criteria: { institutions: { types: ["university"] } } },
    {
      id: "lists",
      name: "Lists",
      criteria: {
        domains: { allow: ["acme.samples", "tum.de"], deny: ["cs.ox.ac.uk"] },
        email: { rejectFreeMail: true }
      }
    },
    { id: "alumni", name: "Alumni too", criteria: { institutions: { roles: ["student", "staff", "alumni"] } } },
    { id: "quoted", name: "Quoted", criteria: { institutions: {}, email: { allowQuotedLocalPart: true } } },
    {
      id: "patterned",
      name: "Institutions and lists",
      criteria: {
        institutions: { countries: ["US", "DE"] },
        domains: { deny: ["cs.mit.edu"] },
        patterns: { deny: ["mail.*.edu"] },
        email: { rejectFreeMail: true, rejectDisposable: false }
      }
    }
  ],
  offers: [
    { id: "three", team: "acme", name: "Three", status: "active", targetGroups: ["uk", "unis", "lists"] },
    { id: "alumni", team: "acme", name: "Alumni", status: "active", targetGroups: ["alumni", "lists"] },
    { id: "syntaxes", team: "acme", name: "Two syntaxes", status: "active", targetGroups: ["unis", "quoted"] },
    {
      id: "institutions",
      team: "acme",
      name: "Institutions only",
      status: "active",
      targetGroups: ["uk", "unis", "alumni", "patterned"]
    },
    {
      id: "later",
      team: "acme",
      name: "Later",
      status: "active",
      startsAt: "2027-06-01T00:00:00Z",
      targetGroups: ["unis"]
    }
  ]
}

const live = (() => {
  const loaded = LiveSnapshot.loadSync(resourcesSource(resources), { now: () => now })
  if (loaded instanceof InvalidConfiguration) throw loaded
  return loaded
})()

const hosts = [
  "mit.edu",
  "MIT.EDU",
  "ox.ac.uk",
  "cs.ox.ac.uk",
  "alumni.ox.ac.uk",
  "students.ox.ac.uk",
  "cs.mit.edu",
  "mail.mit.edu",
  "alumni.mit.edu",
  "stu.mit.edu",
  "web.mit.edu",
  "tum.de",
  "mail.tum.de",
  "lmu.de",
  "mytum.de",
  "newcollege.edu",
  "www.newcollege.edu",
  "alumni.newcollege.edu",
  "students.unlisted-school.edu",
  "unlisted-school.edu",
  "agnesscott.edu",
  "gmail.com",
  "googlemail.com",
  "mailinator.com",
  "x.mailinator.com",
  "2011.cqut.edu.cn",
  "a.2011.cqut.edu.cn",
  "aarnet.edu.au",
  "mail.aarnet.edu.au",
  // Free mail of an organisation that is not an institution; a stoplisted domain that is disposable itself.
  "pobox.com",
  "a.pobox.com",
  "b.pobox.com",
  "mdu.edu.rs",
  "a.mdu.edu.rs",
  "acme.samples",
  "unknown.samples",
  "müller-universität.de",
  "xn--mller-universitt-3ob.de",
  "[192.0.2.1]",
  "localhost",
  "example.com",
  // Long enough that a long local part makes the address too long (254), and a short one does not.
  `${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.edu`
]
const locals = [
  "jane",
  "Jane.Doe",
  "admin",
  "info",
  "postmaster",
  "j.o.h.n+tag",
  '"quoted one"',
  "a..b",
  ".x",
  "x.",
  "ü",
  "x".repeat(64),
  "y".repeat(65)
]

/** Emails of every kind the verdicts are shared or not for: hosts repeat, so shared verdicts are met again. */
const emails = fc.array(
  fc.oneof(
    {
      weight: 9,
      arbitrary: fc.tuple(fc.constantFrom(...locals), fc.constantFrom(...hosts)).map(([l, h]) => `${l}@${h}`)
    },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }) }
  ),
  { minLength: 1, maxLength: 60 }
)

const offers = ["three", "alumni", "syntaxes", "institutions", "later"]
const key = hashKeyFromSecret("row verdicts test")

describe("offerRowVerdicts", () => {
  it("gives each email the row text and usage counts of its offer's full evaluation, read by a job first or not", () => {
    const { engine } = live.current()
    fc.assert(
      fc.property(fc.constantFrom(...offers), emails, fc.boolean(), (offerId, batch, readFirst) => {
        const compiled = engine.offers.get(offerId)!
        const results = batch.map((email) => evaluateOffer(compiled, engine.context, email, now))
        // As a job reads its batch before evaluating it (`encodeBatch`): plain forms, and hashes under the tally's key.
        const read = readFirst ? new PlainHashes(key, batch) : undefined
        const { verdicts, addresses } = offerRowVerdicts(compiled, engine.context, batch, now, read)
        for (let i = 0; i < batch.length; i++) {
          const email = batch[i]!
          expect(`{"email":${jsonString(email)}${verdictText(verdicts[i]!)}}`).toBe(
            rowText(toOfferResultRow(email, results[i]!))
          )
        }
        const expected = usageTally(key, offerId)
        expected.recordMany(batch, results, now)
        const counted = usageTally(key, offerId)
        counted.recordVerdicts(addresses, verdicts, now, read)
        expect(counted.take()).toEqual(expected.take())
      }),
      { numRuns: 400 }
    )
  })

  it.each([
    ["a role account where a group rejects them", "three", ["jane@ox.ac.uk", "JO@OX.AC.UK", "admin@ox.ac.uk"], "unis"],
    [
      "a quoted local part, in an offer whose groups parse differently",
      "syntaxes",
      ["jane@ox.ac.uk", "sam@ox.ac.uk", '"jane doe"@ox.ac.uk'],
      "quoted"
    ]
  ])(
    "shares one verdict among the emails of a listed host, and evaluates in full %s",
    (_, offerId, emails, matched) => {
      const { engine } = live.current()
      const { verdicts } = offerRowVerdicts(engine.offers.get(offerId)!, engine.context, emails, now)
      expect(verdicts[0]).toBeInstanceOf(SharedVerdict)
      expect(verdicts[1]).toBe(verdicts[0])
      expect(verdicts[2]).not.toBeInstanceOf(SharedVerdict)
      expect(verdicts[2]).toMatchObject({ isValid: true, matchedTargetGroups: [matched] })
    }
  )
})

describe("targetGroupRowVerdicts", () => {
  it("gives each email the row text of its target group's full evaluation, read by a job first or not", () => {
    const { engine } = live.current()
    fc.assert(
      fc.property(
        fc.constantFrom("uk", "unis", "lists", "alumni", "quoted", "patterned"),
        emails,
        fc.boolean(),
        (groupId, batch, readFirst) => {
          const group = engine.targetGroups.get(groupId)!
          const read = readFirst ? new PlainHashes(key, batch) : undefined
          const verdicts = targetGroupRowVerdicts(group, engine.context, batch, read)
          for (let i = 0; i < batch.length; i++) {
            const email = batch[i]!
            expect(`{"email":${jsonString(email)}${verdictText(verdicts[i]!)}}`).toBe(
              rowText(toResultRow(email, evaluateTargetGroup(group, engine.context, email)))
            )
          }
        }
      ),
      { numRuns: 400 }
    )
  })

  it.each([
    ["the alike first", ["ox.ac.uk", "students.ox.ac.uk", "cs.ox.ac.uk", "alumni.ox.ac.uk"]],
    ["another between them", ["ox.ac.uk", "alumni.ox.ac.uk", "students.ox.ac.uk", "cs.ox.ac.uk"]]
  ])(
    "shares one verdict among the hosts of one institution that answer alike, and keeps apart those that do not: %s",
    (_, hosts) => {
      // A configuration of its own, so that its group has judged none of these hosts yet.
      const loaded = LiveSnapshot.loadSync(resourcesSource(resources), { now: () => now })
      if (loaded instanceof InvalidConfiguration) throw loaded
      const { engine } = loaded.current()
      const verdicts = targetGroupRowVerdicts(
        engine.targetGroups.get("uk")!,
        engine.context,
        hosts.map((host) => `jane@${host}`)
      )
      const of = (host: string) => verdicts[hosts.indexOf(host)]
      expect(of("students.ox.ac.uk")).toBe(of("ox.ac.uk"))
      expect(of("cs.ox.ac.uk")).toBe(of("ox.ac.uk"))
      expect(of("alumni.ox.ac.uk")).not.toBe(of("ox.ac.uk"))
      expect(of("alumni.ox.ac.uk")).toMatchObject({ isValid: false })
    }
  )
})

describe("the hosts whose verdicts are kept", () => {
  it("are kept once whatever the targets that judge them", () => {
    const { engine } = live.current()
    const batch = Array.from({ length: 50 }, (_, i) => `jane@host-${i}.numbered.samples`)
    const before = keptHosts()
    targetGroupRowVerdicts(engine.targetGroups.get("unis")!, engine.context, batch)
    expect(keptHosts()).toBe(before + 50)
    targetGroupRowVerdicts(engine.targetGroups.get("uk")!, engine.context, batch)
    offerRowVerdicts(engine.offers.get("three")!, engine.context, batch, now)
    expect(keptHosts()).toBe(before + 50)
  })

  it("are judged on the facts of the configuration asking, not of one that judged them before", () => {
    // The same hosts, first under the built-in data, then under a dataset that lists them as a university.
    const dataset = {
      name: "partners.csv",
      format: "csv" as const,
      content: "domain,name,country,region,type\npartner-college.org,Partner College,GB,,university\n"
    }
    const reloaded = LiveSnapshot.loadSync(resourcesSource(resources, [dataset]), { now: () => now })
    if (reloaded instanceof InvalidConfiguration) throw reloaded
    const batch = ["jane@partner-college.org", "sam@students.partner-college.org"]
    for (const { engine } of [live.current(), reloaded.current(), live.current()]) {
      const group = engine.targetGroups.get("uk")!
      const offer = engine.offers.get("three")!
      expect(targetGroupRowVerdicts(group, engine.context, batch).map(verdictText)).toEqual(
        batch.map((email) => verdictText(toResultRow(email, evaluateTargetGroup(group, engine.context, email))))
      )
      expect(offerRowVerdicts(offer, engine.context, batch, now).verdicts.map(verdictText)).toEqual(
        batch.map((email) => verdictText(toOfferResultRow(email, evaluateOffer(offer, engine.context, email, now))))
      )
    }
    const listed = targetGroupRowVerdicts(
      reloaded.current().engine.targetGroups.get("uk")!,
      reloaded.current().engine.context,
      batch
    )
    expect(listed.map((verdict) => verdict.isValid)).toEqual([true, true])
  })

  it("are numbered afresh once full, in a new generation", () => {
    const numbers = new HostNumbers(2)
    expect([numbers.add("a.samples"), numbers.add("b.samples"), numbers.generation]).toEqual([0, 1, 0])
    expect(numbers.find("b.samples")).toBe(1)
    expect([numbers.add("c.samples"), numbers.generation, numbers.size]).toEqual([0, 1, 1])
    expect(numbers.find("a.samples")).toBe(-1)
    expect(numbers.find("c.samples")).toBe(0)
  })
})

describe("a job's batch", () => {
  // As on a job thread: its usage is counted in a tally or nowhere (a daemon with statistics off).
  const validation = Validation.make(
    live,
    { record: () => undefined, recordMany: () => undefined },
    ValidationCounters.ignore
  )

  it("is written as the rows of the full evaluation, usage and duplicates' hashes alike, of an offer or a target group, counted or not", () => {
    fc.assert(
      fc.property(fc.constantFrom(...offers, "unis", "uk"), emails, fc.boolean(), (targetId, batch, counted) => {
        const lines = new Uint8Array(Buffer.from(`${batch.map(emailLine).join("\n")}\n`))
        const offerId = offers.includes(targetId) ? targetId : undefined
        const target = offerId === undefined ? { targetGroupId: targetId } : { offerId }
        const request = { target: target as never, lines, count: batch.length, columns: [] }
        const counts = offerId !== undefined && counted
        const byRows = usageTally(key, targetId)
        const expected = encodeBatch(
          request,
          (t, e, tally) => validation.rows(ALL_TEAMS, t, e, tally),
          counts ? byRows : undefined
        )
        const byVerdicts = usageTally(key, targetId)
        const actual = encodeBatch(
          { ...request, lines: lines.slice() },
          (t, e, tally) => validation.rowVerdicts(ALL_TEAMS, t, e, tally),
          counts ? byVerdicts : undefined
        )
        expect(Buffer.from(actual.text).toString()).toBe(Buffer.from(expected.text).toString())
        expect([...actual.splices]).toEqual([...expected.splices])
        expect([...actual.hashes]).toEqual([...expected.hashes])
        expect(byVerdicts.take()).toEqual(byRows.take())
      }),
      { numRuns: 200 }
    )
  })

  it("shares an offer's verdict among the emails of one host whether or not a tally counts them", () => {
    for (const tally of [usageTally(key, "three"), undefined]) {
      const [first, second, other] = validation.rowVerdicts(
        ALL_TEAMS,
        { offerId: "three" },
        ["jane@ox.ac.uk", "sam@ox.ac.uk", "jane@mit.edu"],
        tally
      )
      expect(first).toBeInstanceOf(SharedVerdict)
      expect(second).toBe(first)
      expect(other).not.toBe(first)
    }
  })
})
