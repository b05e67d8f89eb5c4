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
})
