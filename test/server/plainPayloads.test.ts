/**
 * The plain shape of the validation bodies (single and bulk) is exactly
 * what the contract's schema accepts: over generated JSON bodies near the shape (each field right,
 * missing, of another type, too long, too short; unknown fields), a body
 * is plain when and only when the schema decodes it, and then as the same
 * value. So the fast path answers from the plain shape what the schema
 * would have let through, and leaves the rest to it.
 */
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { BulkProcessRequest } from "../../src/api/offers.ts"
import {
  BulkRequest,
  EMAIL_MAX_LENGTH,
  ID_MAX_LENGTH,
  ValidateOfferRequest,
  ValidateTargetGroupRequest
} from "../../src/api/validation.ts"
import {
  plainBulkProcessRequest,
  plainBulkRequest,
  plainOfferRequest,
  plainTargetGroupRequest
} from "../../src/server/plainPayloads.ts"
import { payloadParseOptions } from "../../src/server/requestErrors.ts"

/** Any JSON value other than the field's own kind, or a near miss of it. */
const anyJson = fc.jsonValue({ maxDepth: 2 })
const string = (max: number) =>
  fc.oneof(
    fc.string({ maxLength: 12 }),
    fc.constantFrom("", "a".repeat(max), "a".repeat(max + 1), "ü".repeat(max), "__proto__", "x@samples.com")
  )
const id = fc.oneof({ weight: 4, arbitrary: string(ID_MAX_LENGTH) }, { weight: 1, arbitrary: anyJson })
const email = fc.oneof({ weight: 8, arbitrary: string(EMAIL_MAX_LENGTH) }, { weight: 1, arbitrary: anyJson })
const list = <A>(item: fc.Arbitrary<A>) =>
  fc.oneof({ weight: 6, arbitrary: fc.array(item, { maxLength: 6 }) }, { weight: 1, arbitrary: anyJson })
const unknownFields = fc.dictionary(fc.constantFrom("extra", "__proto__", "constructor", "Emails"), anyJson, {
  maxKeys: 1
})

/** An object from optional fields, built as JSON.parse builds it (so `__proto__` is an own key). */
const body = (fields: Record<string, fc.Arbitrary<unknown>>) =>
  fc
    .tuple(fc.record(fields, { requiredKeys: [] }), fc.oneof({ weight: 4, arbitrary: fc.constant({}) }, unknownFields))
    .map(([known, extra]) => JSON.parse(JSON.stringify({ ...known, ...extra })) as unknown)

const bulkBodies = fc.oneof(
  {
    weight: 12,
    arbitrary: body({
      emails: list(email),
      targetGroupId: id,
      offerId: id,
      details: fc.oneof(fc.boolean(), anyJson),
      reasonText: fc.oneof(fc.boolean(), anyJson)
    })
  },
  { weight: 1, arbitrary: anyJson }
)
const targetGroupBodies = fc.oneof(
  { weight: 12, arbitrary: body({ email, targetGroupId: id, explain: fc.oneof(fc.boolean(), anyJson) }) },
  { weight: 1, arbitrary: anyJson }
)
const offerBodies = fc.oneof({ weight: 12, arbitrary: body({ email, offerId: id }) }, { weight: 1, arbitrary: anyJson })
const bulkProcessBodies = fc.oneof(
  {
    weight: 12,
    arbitrary: body({
      requests: list(
        fc.oneof({ weight: 6, arbitrary: body({ offerId: id, email }) }, { weight: 1, arbitrary: anyJson })
      )
    })
  },
  { weight: 1, arbitrary: anyJson }
)

const agreesWithSchema = <A>(schema: Schema.Codec<A, unknown>, plain: (input: unknown) => A | undefined) => {
  const decode = Schema.decodeUnknownExit(schema, payloadParseOptions)
  return (input: unknown) => {
    const decoded = decode(input)
    const recognised = plain(input)
    expect(recognised !== undefined, JSON.stringify(input)).toBe(Exit.isSuccess(decoded))
    if (Exit.isSuccess(decoded)) expect(recognised).toEqual(decoded.value)
  }
}

describe("the plain shape of the single validation bodies", () => {
  it("of validate/target-group is what the contract's schema accepts, as the same value", () => {
    fc.assert(
      fc.property(targetGroupBodies, agreesWithSchema(ValidateTargetGroupRequest as never, plainTargetGroupRequest)),
      {
        numRuns: 3000
      }
    )
  })

  it("of validate/offer is what the contract's schema accepts, as the same value", () => {
    fc.assert(fc.property(offerBodies, agreesWithSchema(ValidateOfferRequest as never, plainOfferRequest)), {
      numRuns: 3000
    })
  })

  it("is recognised in the bodies clients send", () => {
    expect(plainTargetGroupRequest({ email: "jane@uni.samples.edu", targetGroupId: "uk-students" })).toBeDefined()
    expect(plainTargetGroupRequest({ email: "jane@uni.samples.edu", targetGroupId: "g", explain: true })).toBeDefined()
    expect(plainOfferRequest({ email: "jane@uni.samples.edu", offerId: "o" })).toBeDefined()
  })
})

describe("the plain shape of the bulk bodies", () => {
  it("of validate/bulk is what the contract's schema accepts, as the same value", () => {
    fc.assert(fc.property(bulkBodies, agreesWithSchema(BulkRequest as never, plainBulkRequest)), { numRuns: 3000 })
  })

  it("of offers/bulk-process is what the contract's schema accepts, as the same value", () => {
    fc.assert(fc.property(bulkProcessBodies, agreesWithSchema(BulkProcessRequest as never, plainBulkProcessRequest)), {
      numRuns: 3000
    })
  })

  it("is recognised in the body clients send", () => {
    expect(plainBulkRequest({ emails: ["jane@uni.samples.edu"], targetGroupId: "uk-students" })).toBeDefined()
    expect(plainBulkProcessRequest({ requests: [{ offerId: "o", email: "jane@uni.samples.edu" }] })).toBeDefined()
  })
})
