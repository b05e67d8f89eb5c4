import * as Schema from "effect/Schema"
import { describe, expect, it } from "vitest"
import { decodeWhatDecodes } from "../../src/config/partialDecode.ts"
import { Settings } from "../../src/config/Settings.ts"

/** The issue of a failed decoding, as `decodeYaml` gets it. */
const issueOf = (schema: Schema.ConstraintDecoder<unknown>, input: unknown) => {
  const exit = Schema.decodeUnknownExit(schema, { onExcessProperty: "error", errors: "all" })(input)
  if (exit._tag === "Success") throw new Error("expected a failure")
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  return (failure!.error as Schema.SchemaError).issue
}
const partial = (schema: Schema.ConstraintDecoder<unknown>, input: unknown) =>
  decodeWhatDecodes(schema, input, issueOf(schema, input))

describe("decodeWhatDecodes", () => {
  it("drops unknown keys and bad values, keeping every other setting", () => {
    const input = {
      teams: [{ id: "acme", nmae: "Acme" }, { id: "globex" }],
      logging: { logEmail: true, level: "debug" },
      limits: { bulkMaxEmails: "lots", jobMaxEmails: 5000 }
    }
    const settings = partial(Settings, input) as Settings
    expect(settings.teams.map((team) => team.id)).toEqual(["acme", "globex"])
    expect(settings.logging.level).toBe("debug")
    expect(settings.limits.bulkMaxEmails).toBe(1000) // the default stands in for the bad value
    expect(settings.limits.jobMaxEmails).toBe(5000)
    expect(input.teams[0]).toEqual({ id: "acme", nmae: "Acme" }) // the input is not changed
  })

  it("drops a list item that cannot stand without a required key", () => {
    const settings = partial(Settings, { teams: [{ name: "no id" }, { id: "globex" }] }) as Settings
    expect(settings.teams.map((team) => team.id)).toEqual(["globex"])
  })

  it("gives up when the document itself is what fails", () => {
    const Offerish = Schema.Struct({ id: Schema.String, status: Schema.Literals(["active", "paused"]) })
    expect(partial(Offerish, { id: "x", status: "activ" })).toBeUndefined()
    expect(partial(Settings, ["not", "a", "mapping"])).toBeUndefined()
  })
})
