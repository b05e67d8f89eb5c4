import { getHeapStatistics } from "node:v8"
import { describe, expect, it } from "vitest"
import {
  HeapBound,
  KEPT_YOUNG_GENERATION_MB,
  releaseMemory,
  runEnded,
  runStarted,
  uploadBegins,
  youngGenerationMb
} from "../../src/jobs/releaseMemory.ts"

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

  it("gives the young generation back when an upload begins with no run going, and not during a run", () => {
    runStarted()
    try {
      const grown = growYoungGeneration()
      expect(grown).toBeGreaterThan(KEPT_YOUNG_GENERATION_MB)
      uploadBegins()
      expect(youngGenerationMb()).toBe(grown)
    } finally {
      runEnded()
    }
    expect(growYoungGeneration()).toBeGreaterThan(KEPT_YOUNG_GENERATION_MB)
    uploadBegins()
    expect(youngGenerationMb()).toBeLessThanOrEqual(KEPT_YOUNG_GENERATION_MB)
  })
})

/** Promotes ~`mb` MB that then die in the old generation, as entries a cache held for a while and let go. */
const promoteGarbage = (mb: number) => {
  let kept: Array<string> = []
  const start = getHeapStatistics().used_heap_size
  while (getHeapStatistics().used_heap_size - start < mb * 1024 * 1024) {
    for (let i = 0; i < 10_000; i++) kept.push(`entry ${kept.length} ${"x".repeat(64)}`)
  }
  kept = []
  return kept.length
}

describe("HeapBound", () => {
  it("collects once the heap has grown past its bound, and not before", () => {
    const bound = new HeapBound({ factor: 1, slackMb: 32 })
    expect(bound.check()).toBe(false) // takes the measure
    expect(bound.check()).toBe(false)
    promoteGarbage(48)
    const before = getHeapStatistics().used_heap_size
    expect(bound.check()).toBe(true)
    expect(getHeapStatistics().used_heap_size).toBeLessThan(before - 32 * 1024 * 1024)
    expect(bound.check()).toBe(false)
  })

  it("settles on what a full collection leaves: the garbage before it raises no bound, the first check is a check", () => {
    const bound = new HeapBound({ factor: 1, slackMb: 32 })
    promoteGarbage(48)
    const before = getHeapStatistics().used_heap_size
    bound.settle()
    expect(getHeapStatistics().used_heap_size).toBeLessThan(before - 32 * 1024 * 1024)
    promoteGarbage(40)
    expect(bound.check()).toBe(true)
    expect(bound.check()).toBe(false)
  })
})
