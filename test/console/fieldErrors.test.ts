/** A refused write's field errors, by the form field they belong to. */
import { describe, expect, it } from "vitest"
import { fieldMessages } from "../../console/src/data/fieldErrors.ts"

describe("field messages", () => {
  it("sort a problem's field errors onto the form's fields, and list the others apart", () => {
    expect(
      fieldMessages(
        {
          code: "VALIDATION_ERROR",
          errors: [
            { field: "/country", message: '"UK" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)' },
            { field: "/name", message: "this field is required" },
            { field: "/name", message: "at most 300 characters" },
            { field: "/region/0", message: "not a region" },
            { field: "/extra", message: "unknown field" },
            { message: "something about the whole body" }
          ]
        },
        ["name", "country", "region"]
      )
    ).toEqual({
      byField: {
        country: '"UK" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)',
        name: "this field is required; at most 300 characters",
        region: "not a region"
      },
      other: ["extra: unknown field", "something about the whole body"]
    })
  })

  it("find nothing in a problem without field errors, or in none", () => {
    expect(fieldMessages({ code: "CONFLICT", detail: "listed already" }, ["name"])).toEqual({ byField: {}, other: [] })
    expect(fieldMessages(undefined, ["name"])).toEqual({ byField: {}, other: [] })
  })
})
