/**
 * Entity tags of resources: what a read answers (`ETag`), what a write
 * checks (`If-Match`, strong, the stored version) and what a cached copy
 * revalidates (`If-None-Match`, weak, the whole representation).
 */
import { describe, expect, it } from "vitest"
import { entityTag, expectedVersion, isCurrentCopy } from "../../../src/server/handlers/shared.ts"

describe("entity tags", () => {
  it("name the representation: the stored version and what changes without a write", () => {
    expect(entityTag("v1")).toBe('"v1"')
    const active = entityTag("v1", "active")
    const expired = entityTag("v1", "expired")
    expect(active).toBe('"v1.active"')
    // A copy cached while the offer was active is not current once its window has ended.
    expect(isCurrentCopy(active, expired)).toBe(false)
    expect(isCurrentCopy(active, active)).toBe(true)
  })

  it("compare weakly for If-None-Match, lists and * included", () => {
    const tag = entityTag("v1", "active")
    expect(isCurrentCopy(`W/${tag}`, tag)).toBe(true)
    expect(isCurrentCopy(`"v0.active", ${tag}`, tag)).toBe(true)
    expect(isCurrentCopy("*", tag)).toBe(true)
    expect(isCurrentCopy('"v0.active"', tag)).toBe(false)
    expect(isCurrentCopy(undefined, tag)).toBe(false)
  })

  it("give a write the stored versions they name, strongly, whatever the variant", () => {
    expect(expectedVersion('"v1.expired"')).toEqual(["v1"])
    expect(expectedVersion('"v1", W/"v2"')).toEqual(["v1"])
    expect(expectedVersion("*")).toBe("*")
    expect(expectedVersion(undefined)).toBeUndefined()
  })
})
