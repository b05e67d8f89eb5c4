import { describe, expect, it } from "vitest"
import { refusedTransition } from "../../src/domain/offerMoves.ts"
import { capitalized, withArticle } from "../../src/domain/words.ts"

describe("the sentences answers are made of", () => {
  it("put the article a word is said with", () => {
    expect(["active", "archived", "expired", "offer", "other"].map(withArticle)).toEqual([
      "an active",
      "an archived",
      "an expired",
      "an offer",
      "an other"
    ])
    expect(["draft", "paused", "target group", "university", "college"].map(withArticle)).toEqual([
      "a draft",
      "a paused",
      "a target group",
      "a university",
      "a college"
    ])
    expect(capitalized(withArticle("offer"))).toBe("An offer")
  })

  it("say why an offer cannot move in plain English", () => {
    expect(refusedTransition("active", "draft")).toBe(
      "an active offer cannot go back to draft; pause or archive it instead"
    )
    expect(refusedTransition("paused", "draft")).toMatch(/^a paused offer/)
  })
})
