/** A target group's criteria in plain words, defaults read as the config format defines them. */
import { describe, expect, it } from "vitest"
import { countryName, describeCriteria, listWords } from "../../console/src/data/criteria.ts"

describe("criteria in words", () => {
  it("names institutions by type, country and region, whom the host serves and suffix rules", () => {
    const lines = describeCriteria({
      institutions: { types: ["university", "college"], countries: ["GB", "DE"], includeSuffixRules: false },
      email: {}
    })
    expect(lines[0]).toEqual({
      criterion: "institutions",
      label: "Institutions",
      text: "Universities and colleges in United Kingdom (GB) and Germany (DE) for hosts serving student and staff; listed institutions only (no suffix rules)."
    })
    expect(describeCriteria({ institutions: { regions: ["DE-BY"], roles: ["alumni"] } })[0]?.text).toBe(
      "Any institution in the regions DE-BY for hosts serving alumni; academic suffix rules (*.edu, *.ac.XX) count."
    )
  })

  it("lists allowed and denied domains and patterns", () => {
    const lines = describeCriteria({
      domains: { allow: ["partner-college.samples", "acme-academy.samples"], deny: ["alumni.partner-college.samples"] },
      patterns: { allow: ["*.ac.uk"] }
    })
    expect(lines.map((line) => line.criterion)).toEqual(["domains", "patterns", "emailPolicy"])
    expect(lines[0]?.text).toBe(
      "allowed: partner-college.samples, acme-academy.samples; denied: alumni.partner-college.samples (the most specific entry wins)."
    )
    expect(lines[1]?.text).toBe("allowed: *.ac.uk (the most specific entry wins).")
  })

  it("says what the email policy refuses, the defaults included", () => {
    const policy = (email: NonNullable<Parameters<typeof describeCriteria>[0]["email"]>) =>
      describeCriteria({ email }).find((line) => line.criterion === "emailPolicy")?.text
    expect(describeCriteria({}).at(-1)?.text).toBe(
      "Refuses disposable addresses, domains known for abuse and look-alike (confusable) domains."
    )
    expect(policy({})).toBe(
      "Refuses disposable addresses, domains known for abuse and look-alike (confusable) domains."
    )
    expect(policy({ rejectFreeMail: true, rejectDisposable: false, allowIpLiteral: true })).toBe(
      "Refuses free-mail providers, domains known for abuse and look-alike (confusable) domains; accepts IP-address domains."
    )
    expect(policy({ rejectDisposable: false, rejectAbused: false, rejectConfusable: false })).toBe(
      "Refuses nothing by policy."
    )
  })

  it("joins words and names countries", () => {
    expect(listWords([])).toBe("")
    expect(listWords(["a"])).toBe("a")
    expect(listWords(["a", "b", "c"])).toBe("a, b and c")
    expect(countryName("fr")).toBe("France (fr)")
    expect(countryName("QQ")).toBe("QQ")
  })
})
