import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { ValidateOfferRequest, ValidateTargetGroupRequest } from "../../src/api/validation.ts"
import { plainPayload } from "../../src/server/hotPath.ts"

const options = { errors: "all", onExcessProperty: "error" } as const
const decoders = {
  targetGroupId: Schema.decodeUnknownExit(ValidateTargetGroupRequest, options),
  offerId: Schema.decodeUnknownExit(ValidateOfferRequest, options)
} as const

describe("the hot path's payload check", () => {
  it("accepts exactly what the contract's schema accepts, with the same value", () => {
    const text = fc.oneof(fc.string({ maxLength: 70 }), fc.string({ minLength: 1000, maxLength: 1100 }))
    const field = fc.oneof(text, fc.integer(), fc.constant(null), fc.boolean())
    const body = fc.oneof(
      fc.record({ email: field, targetGroupId: field }),
      fc.record({ email: field, offerId: field }),
      fc.record({ email: field, targetGroupId: field, extra: field }),
      fc.record({ email: field }),
      fc.dictionary(fc.string({ maxLength: 12 }), field, { maxKeys: 3 }),
      fc.array(field),
      field
    )
    fc.assert(
      fc.property(body, fc.constantFrom("targetGroupId" as const, "offerId" as const), (input, idField) => {
        const quick = plainPayload(input, idField)
        const decoded: Exit.Exit<unknown, unknown> = decoders[idField](input)
        if (quick !== undefined) expect(Exit.isSuccess(decoded) && decoded.value).toEqual(quick)
        // The check may pass on to the schema; it must never accept what the schema rejects.
        if (Exit.isFailure(decoded)) expect(quick).toBeUndefined()
      }),
      { numRuns: 3000 }
    )
  })
})
