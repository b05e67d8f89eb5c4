import { describe, expect, it } from "vitest"
import { EngineBuilder } from "../../src/app/EngineBuilder.ts"
import type { LoadedConfig } from "../../src/config/loadConfig.ts"
import { configFromResources } from "../../src/config/resourcesConfig.ts"

const configWith = (groups: ReadonlyArray<{ id: string; allow: string }>): LoadedConfig => {
  const loaded = configFromResources({
    targetGroups: groups.map(({ id, allow }) => ({ id, name: id, criteria: { domains: { allow: [allow] } } }))
  })
  if (!loaded.ok) throw new Error("the test config does not load")
  return loaded.config
}

describe("EngineBuilder", () => {
  it("recompiles only the target groups that changed", () => {
    const builder = new EngineBuilder({ builtInInstitutions: false })
    const groups = Array.from({ length: 50 }, (_, i) => ({ id: `g${i}`, allow: `g${i}.samples` }))
    const first = builder.engineFor(configWith(groups))
    if (!("targetGroups" in first)) throw first
    const changed = groups.map((group, i) => (i === 7 ? { ...group, allow: "other.samples" } : group))
    const second = builder.engineFor(configWith([...changed, { id: "new", allow: "new.samples" }]))
    if (!("targetGroups" in second)) throw second
    const recompiled = [...second.targetGroups].filter(([id, compiled]) => first.targetGroups.get(id) !== compiled)
    expect(recompiled.map(([id]) => id).sort()).toEqual(["g7", "new"])
    expect(second.validate("jane@other.samples", "g7").isValid).toBe(true)
    expect(second.validate("jane@g7.samples", "g7").isValid).toBe(false)
  })

  it("forgets the verdicts its engines remembered: target groups compiled afresh, the index kept", () => {
    const builder = new EngineBuilder()
    const loaded = configFromResources({
      targetGroups: [{ id: "uni", name: "uni", criteria: { institutions: { countries: ["GB"] } } }]
    })
    if (!loaded.ok) throw new Error("the test config does not load")
    const first = builder.engineFor(loaded.config)
    if (!("targetGroups" in first)) throw first
    const before = first.validate("jane@mit.edu", "uni")
    expect(first.context.hosts.memoized).toBe(1)
    builder.forgetVerdicts()
    expect(first.context.hosts.memoized).toBe(0)
    const second = builder.engineFor(loaded.config)
    if (!("targetGroups" in second)) throw second
    expect(second.context).toBe(first.context)
    expect(second.targetGroups.get("uni")).not.toBe(first.targetGroups.get("uni"))
    expect(second.validate("jane@mit.edu", "uni")).toEqual(before)
  })
})
