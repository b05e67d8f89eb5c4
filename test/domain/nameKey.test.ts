import { describe, expect, it } from "vitest"
import { nameKey, nameWords } from "../../src/domain/nameKey.ts"

describe("name keys", () => {
  it("fold case, diacritics and punctuation, and spell St. as Saint", () => {
    expect(nameKey("Côte d'Ivoire")).toBe("cotedivoire")
    expect(nameWords("St. Olaf College")).toEqual(["saint", "olaf", "college"])
  })

  it("keep a word that names a property of every object as it is", () => {
    expect(nameWords("Constructor University Bremen")).toEqual(["constructor", "university", "bremen"])
    expect(nameKey("toString hasOwnProperty")).toBe("tostringhasownproperty")
  })
})
