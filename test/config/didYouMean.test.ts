import { describe, expect, it } from "vitest"
import { closestMatch, didYouMean } from "../../src/config/didYouMean.ts"

describe("didYouMean", () => {
  const statuses = ["draft", "active", "paused", "archived"]

  it("finds the word a slip stands for: a missing, extra, wrong or swapped letter, or another case", () => {
    expect(closestMatch("activ", statuses)).toBe("active")
    expect(closestMatch("pasued", statuses)).toBe("paused")
    expect(closestMatch("Archived", statuses)).toBe("archived")
    expect(closestMatch("rejectRoleAcounts", ["rejectDisposable", "rejectRoleAccounts"])).toBe("rejectRoleAccounts")
  })

  it("suggests nothing for a different word, and prefers the closest of several", () => {
    expect(closestMatch("deleted", statuses)).toBeUndefined()
    expect(closestMatch("xy", ["id"])).toBeUndefined()
    expect(closestMatch("nam", ["names", "name"])).toBe("name")
  })

  it("reads as a suffix for a message", () => {
    expect(`unknown team "acmee"${didYouMean("acmee", ["default", "acme"])}`).toBe(
      'unknown team "acmee" (did you mean "acme"?)'
    )
    expect(didYouMean("zzz", ["acme"])).toBe("")
  })
})
