import { describe, expect, it } from "@effect/vitest"
import { hashKeyFromSecret } from "../../src/stats/hashKey.ts"
import { UsageRecorder } from "../../src/stats/UsageRecorder.ts"
import { addUsage, emptyUsageState, toOfferUsage } from "../../src/stats/UsageState.ts"
import { DAY, eligible, ineligible, MAY_1 } from "./fixtures.ts"

const recorder = () => new UsageRecorder(hashKeyFromSecret("test"), () => MAY_1)

const recorderWith = (use: (recorder: UsageRecorder) => void) => {
  const made = recorder()
  use(made)
  return made.pending("o")
}

describe("UsageRecorder", () => {
  it("counts a mixed workload: verdicts, reasons, target groups, unique people, days, first and last", () => {
    const stats = recorder()
    stats.record("o", "Jane.Doe+x@gmail.com", eligible("Jane.Doe+x@gmail.com", "eu", "uk"), MAY_1)
    stats.record("o", "janedoe@googlemail.com", eligible("janedoe@googlemail.com", "eu"), MAY_1 + 1000)
    stats.record("o", "bob@acme.com", ineligible("bob@acme.com", "NOT_AN_INSTITUTION"), MAY_1 + DAY)
    stats.recordMany(
      "o",
      ["not an email", "amy@mit.edu", "amy@mit.edu"],
      [
        ineligible("not an email", "INVALID_EMAIL_FORMAT"),
        ineligible("amy@mit.edu", "OFFER_NOT_ACTIVE"),
        ineligible("amy@mit.edu", "NOT_AN_INSTITUTION")
      ],
      MAY_1 + 2 * DAY
    )
    stats.record("other", "x@y.edu", eligible("x@y.edu"))
    expect(toOfferUsage(stats.pending("o"))).toEqual({
      validations: 6,
      eligible: 2,
      ineligible: 4,
      ineligibleByReason: { INVALID_EMAIL_FORMAT: 1, NOT_AN_INSTITUTION: 2, OFFER_NOT_ACTIVE: 1 },
      matchesByTargetGroup: { eu: 2, uk: 1 },
      // jane (two spellings), bob, amy; "not an email" is no one.
      uniqueEmails: { estimate: 3, method: "hyperloglog", precision: 14, relativeStandardError: 0.0081 },
      daily: [
        { date: "2024-05-01", validations: 2, eligible: 2, ineligible: 0 },
        { date: "2024-05-02", validations: 1, eligible: 0, ineligible: 1 },
        { date: "2024-05-03", validations: 3, eligible: 0, ineligible: 3 }
      ],
      firstValidatedAt: "2024-05-01T12:00:00.000Z",
      lastValidatedAt: "2024-05-03T12:00:00.000Z",
      verifications: { started: 0, sent: 0, messagesSent: 0, verified: 0, failed: 0, expired: 0, conversionRate: 0 },
      hostedFlow: {
        started: 0,
        reachedCodeStep: 0,
        completed: 0,
        ineligibleSubmissions: 0,
        abandonedAtEmailStep: 0,
        abandonedAtCodeStep: 0
      }
    })
    expect(toOfferUsage(stats.pending("other"))).toMatchObject({ validations: 1, eligible: 1 })
  })

  it("counts the hosted page's funnel in total and by day, the abandonments derived", () => {
    const stats = recorder()
    for (const at of [MAY_1, MAY_1 + 1, MAY_1 + 2, MAY_1 + DAY]) stats.recordHostedFlow("o", "started", at)
    stats.recordHostedFlow("o", "ineligibleSubmissions", MAY_1)
    stats.recordHostedFlow("o", "reachedCodeStep", MAY_1)
    stats.recordHostedFlow("o", "reachedCodeStep", MAY_1 + DAY)
    stats.recordHostedFlow("o", "completed", MAY_1 + DAY)
    stats.record("o", "a@x.edu", eligible("a@x.edu"), MAY_1)
    const usage = toOfferUsage(stats.pending("o"))
    expect(usage.hostedFlow).toEqual({
      started: 4,
      reachedCodeStep: 2,
      completed: 1,
      ineligibleSubmissions: 1,
      abandonedAtEmailStep: 2,
      abandonedAtCodeStep: 1
    })
    // A day with flows and no validation is a day of its own; a day without a flow has no `hostedFlow`.
    expect(usage.daily).toEqual([
      {
        date: "2024-05-01",
        validations: 1,
        eligible: 1,
        ineligible: 0,
        hostedFlow: { started: 3, reachedCodeStep: 1, completed: 0, ineligibleSubmissions: 1 }
      },
      {
        date: "2024-05-02",
        validations: 0,
        eligible: 0,
        ineligible: 0,
        hostedFlow: { started: 1, reachedCodeStep: 1, completed: 1, ineligibleSubmissions: 0 }
      }
    ])
    // Validations alone leave the funnel and the days as they were.
    expect(
      toOfferUsage(recorderWith((r) => r.record("o", "a@x.edu", eligible("a@x.edu")))).daily[0]
    ).not.toHaveProperty("hostedFlow")
  })

  it("hands over pending deltas and takes back the ones a flush could not store", () => {
    const stats = recorder()
    stats.record("o", "a@x.edu", eligible("a@x.edu"))
    const taken = stats.take()
    expect(stats.isEmpty).toBe(true)
    stats.record("o", "b@x.edu", ineligible("b@x.edu", "DOMAIN_DENIED"))
    stats.restore("o", taken.get("o")!)
    expect(toOfferUsage(stats.pending("o"))).toMatchObject({ validations: 2, eligible: 1, ineligible: 1 })
    expect(toOfferUsage(stats.pending("o")).uniqueEmails.estimate).toBe(2)
  })

  it("keeps the daily buckets of the last 400 days", () => {
    const state = emptyUsageState()
    const stats = recorder()
    for (let day = 0; day < 450; day++) stats.record("o", "a@x.edu", eligible("a@x.edu"), MAY_1 + day * DAY)
    addUsage(state, stats.take().get("o")!)
    const usage = toOfferUsage(state)
    expect(usage.daily).toHaveLength(400)
    expect(usage.validations).toBe(450)
    expect(usage.daily.at(-1)!.date).toBe(new Date(MAY_1 + 449 * DAY).toISOString().slice(0, 10))
  })

  it("gives an empty usage for an offer never validated", () => {
    expect(toOfferUsage(recorder().pending("never"))).toMatchObject({
      validations: 0,
      uniqueEmails: { estimate: 0 },
      daily: [],
      firstValidatedAt: null,
      lastValidatedAt: null
    })
  })
})

describe("UsageRecorder.recordVerdicts with hashes made already", () => {
  const key = hashKeyFromSecret("test")
  const addresses = ["amy@mit.edu", "bob@mit.edu", undefined]
  const verdicts = [{ isValid: true }, { isValid: true }, { isValid: false, reasonCode: "INVALID_EMAIL_FORMAT" }]
  /** Hashes that are not the addresses': every one the same. */
  const made = (under: object) => ({
    key: under,
    made: Uint8Array.of(1, 1, 1),
    high: Uint32Array.of(7, 7, 7),
    low: Uint32Array.of(9, 9, 9)
  })
  const uniques = (recorder: UsageRecorder) => toOfferUsage(recorder.pending("o")).uniqueEmails.estimate

  it("counts an address by the hash made of it under the recorder's own key", () => {
    const recorder = new UsageRecorder(key)
    recorder.recordVerdicts("o", addresses, verdicts, MAY_1, made(key))
    expect(uniques(recorder)).toBe(1)
  })

  it("hashes the address itself when the hashes were made under another key", () => {
    const recorder = new UsageRecorder(key)
    recorder.recordVerdicts("o", addresses, verdicts, MAY_1, made(hashKeyFromSecret("test")))
    expect(uniques(recorder)).toBe(2)
  })
})
