import { describe, expect, it } from "vitest"
import { KEPT_YOUNG_GENERATION_MB, releaseMemory, youngGenerationMb } from "../../src/jobs/releaseMemory.ts"

/** Grows this thread's young generation as a large upload does: many objects that survive a collection or two. */
const growYoungGeneration = () => {
  let kept: Array<{ readonly i: number; readonly text: string }> = []
  for (let i = 0; i < 20_000_000 && youngGenerationMb() <= KEPT_YOUNG_GENERATION_MB; i++) {
    kept.push({ i, text: `item ${i}` })
    if (kept.length > 200_000) kept = []
  }
  return youngGenerationMb()
}

describe("releaseMemory", () => {
  it("shrinks a young generation grown past its bound, and leaves a small one alone", () => {
    expect(growYoungGeneration()).toBeGreaterThan(KEPT_YOUNG_GENERATION_MB)
    expect(releaseMemory()).toBe(true)
    expect(youngGenerationMb()).toBeLessThanOrEqual(KEPT_YOUNG_GENERATION_MB)
    expect(releaseMemory()).toBe(false)
  })
})
