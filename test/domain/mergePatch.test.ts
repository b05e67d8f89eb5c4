import { describe, expect, it } from "vitest"
import { applyMergePatch } from "../../src/domain/mergePatch.ts"

describe("applyMergePatch", () => {
  // RFC 7396, Appendix A: every example of the RFC.
  const cases: ReadonlyArray<readonly [unknown, unknown, unknown]> = [
    [{ a: "b" }, { a: "c" }, { a: "c" }],
    [{ a: "b" }, { b: "c" }, { a: "b", b: "c" }],
    [{ a: "b" }, { a: null }, {}],
    [{ a: "b", b: "c" }, { a: null }, { b: "c" }],
    [{ a: ["b"] }, { a: "c" }, { a: "c" }],
    [{ a: "c" }, { a: ["b"] }, { a: ["b"] }],
    [{ a: { b: "c" } }, { a: { b: "d", c: null } }, { a: { b: "d" } }],
    [{ a: [{ b: "c" }] }, { a: [1] }, { a: [1] }],
    [
      ["a", "b"],
      ["c", "d"],
      ["c", "d"]
    ],
    [{ a: "b" }, ["c"], ["c"]],
    [{ a: "foo" }, null, null],
    [{ a: "foo" }, "bar", "bar"],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: "b", c: null }, { a: "b" }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }]
  ]
  it.each(cases)("%j patched with %j is %j", (target, patch, result) => {
    expect(applyMergePatch(target, patch)).toEqual(result)
  })

  it("leaves the target untouched", () => {
    const target = { a: { b: 1 }, c: 2 }
    applyMergePatch(target, { a: { b: null }, c: null })
    expect(target).toEqual({ a: { b: 1 }, c: 2 })
  })
})
