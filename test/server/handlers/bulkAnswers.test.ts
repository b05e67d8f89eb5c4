/**
 * The bulk answers as bytes (`validateBulk`, `processBatch`): what the
 * contract's schemas describe, each item what the engine's result gives,
 * in input order, the text the same as JSON.stringify writes.
 */

import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Schema from "effect/Schema"
import { BulkProcessResponse } from "../../../src/api/offers.ts"
import { BulkResponse } from "../../../src/api/validation.ts"
import { LiveSnapshot, Snapshot } from "../../../src/app/Snapshot.ts"
import { resourcesSource } from "../../../src/app/sources.ts"
import { Validation, ValidationCounters, ValidationError } from "../../../src/app/Validation.ts"
import { InvalidConfiguration } from "../../../src/domain/errors.ts"
import { toOfferResultRow, toResultRow } from "../../../src/domain/ResultRow.ts"
import { processBatch } from "../../../src/server/handlers/offers.ts"
import { validateBulk } from "../../../src/server/handlers/validation.ts"
import { UsageStatistics } from "../../../src/stats/UsageStatistics.ts"

const resources = {
  targetGroups: [
    { id: "uk", name: "UK students", criteria: { institutions: { countries: ["GB"] } } },
    { id: "de", name: "Studierende", criteria: { institutions: { countries: ["DE"] } } },
    { id: "acme-only", team: "acme", name: "Acme's", criteria: { domains: { allow: ["acme.samples"] } } }
  ],
  offers: [
    { id: "acme-spring", team: "acme", name: "Spring", status: "active", targetGroups: ["uk", "de", "acme-only"] },
    { id: "globex-fall", team: "globex", name: "Fall", status: "active", targetGroups: ["uk"] }
  ]
}

const live = LiveSnapshot.loadSync(resourcesSource(resources))
if (live instanceof InvalidConfiguration) throw live
const layer = Validation.layer.pipe(
  Layer.provide(
    Layer.mergeAll(
      Snapshot.layer(live),
      UsageStatistics.layerMemory(),
      Layer.succeed(ValidationCounters, ValidationCounters.ignore)
    )
  )
)

const emails = [
  "jane@ox.ac.uk",
  "Jane@OX.AC.UK",
  "ü@tum.de",
  "jo@acme.samples",
  "not an email",
  '"quoted"@cam.ac.uk',
  "ann@gmail.com",
  "li@北京大学.cn"
]

const parsed = (bytes: unknown) => {
  expect(bytes).toBeInstanceOf(Uint8Array)
  return JSON.parse(Buffer.from(bytes as Uint8Array).toString("utf8"))
}
const found = <A>(results: A | ValidationError): A => {
  if (results instanceof ValidationError) throw results
  return results
}
const plain = (value: unknown) => JSON.parse(JSON.stringify(value))

describe("validateBulk", () => {
  it.effect("answers compact rows, or full results with details, then the summary and the request id", () =>
    Effect.gen(function* () {
      const validation = yield* Validation
      const rows = parsed(validateBulk(validation, "acme", { emails, targetGroupId: "uk" }, 1000, "req-1"))
      const results = found(validation.manyTargetGroup("acme", emails, "uk"))
      expect(Schema.is(BulkResponse)(rows)).toBe(true)
      expect(rows.results).toEqual(plain(results.map((result, i) => toResultRow(emails[i]!, result))))
      expect(rows.requestId).toBe("req-1")
      const badFormat = results.filter((result) => result.reasonCode === "INVALID_EMAIL_FORMAT").length
      expect(badFormat).toBeGreaterThan(0)
      expect(rows.summary).toMatchObject({ total: emails.length, badFormat })
      expect(rows.summary.valid + rows.summary.invalid).toBe(emails.length)

      const lean = parsed(
        validateBulk(validation, "acme", { emails, targetGroupId: "uk", reasonText: false }, 1000, "r")
      )
      const withoutReason = rows.results.map(({ reason: _, ...row }: Record<string, unknown>) => row)
      expect(lean.results).toEqual(withoutReason)
      expect(lean.results).not.toEqual(rows.results)
      expect(lean.summary).toEqual(rows.summary)

      const full = parsed(validateBulk(validation, "acme", { emails, targetGroupId: "uk", details: true }, 1000, "r"))
      expect(full.results).toEqual(plain(results))
      expect(full.summary).toEqual(rows.summary)

      const offers = parsed(validateBulk(validation, "acme", { emails, offerId: "acme-spring" }, 1000, "r"))
      const offerResults = found(validation.manyOffer("acme", emails, "acme-spring"))
      expect(offers.results).toEqual(plain(offerResults.map((result, i) => toOfferResultRow(emails[i]!, result))))
    }).pipe(Effect.provide(layer))
  )

  it.effect("answers the problem of a request it cannot serve", () =>
    Effect.gen(function* () {
      const validation = yield* Validation
      expect(validateBulk(validation, "acme", { emails, targetGroupId: "uk" }, 3, "r")).toMatchObject({
        code: "VALIDATION_ERROR",
        errors: [{ field: "/emails", code: "TOO_MANY" }]
      })
      expect(validateBulk(validation, "acme", { emails, targetGroupId: "uk", offerId: "x" }, 99, "r")).toMatchObject({
        errors: [{ field: "/targetGroupId", code: "EXACTLY_ONE" }]
      })
      expect(
        validateBulk(validation, "acme", { emails, targetGroupId: "uk", details: true, reasonText: false }, 99, "r")
      ).toMatchObject({ errors: [{ field: "/reasonText", code: "NOT_WITH_DETAILS" }] })
      expect(validateBulk(validation, "acme", { emails, offerId: "globex-fall" }, 99, "r")).toMatchObject({
        code: "NOT_FOUND"
      })
    }).pipe(Effect.provide(layer))
  )
})

describe("processBatch", () => {
  it.effect("answers what the contract's schema encodes: a result or a NOT_FOUND per request, in order", () =>
    Effect.gen(function* () {
      const validation = yield* Validation
      const requests = emails.flatMap((email) => [
        { offerId: "acme-spring", email },
        { offerId: "globex-fall", email }
      ])
      const answer = parsed(processBatch(validation, "acme", { requests }, 1000, "req-2"))
      const results = validation
        .batch("acme", requests)
        .map((result, i) =>
          result instanceof ValidationError
            ? { ...requests[i]!, error: { code: "NOT_FOUND" as const, message: `There is no offer "globex-fall".` } }
            : result
        )
      const eligible = results.filter((result) => "isValid" in result && result.isValid).length
      const encoded = Schema.encodeSync(BulkProcessResponse)({
        results,
        summary: { total: requests.length, eligible, ineligible: emails.length - eligible, errors: emails.length },
        requestId: "req-2"
      })
      expect(answer).toEqual(plain(encoded))
      expect(processBatch(validation, "acme", { requests }, 3, "r")).toMatchObject({
        errors: [{ field: "/requests", code: "TOO_MANY" }]
      })
    }).pipe(Effect.provide(layer))
  )
})
