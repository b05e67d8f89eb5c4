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

  it("builds engines that keep no verdicts on institutions, when asked, and judge alike", () => {
    const loaded = configFromResources({
      targetGroups: [
        { id: "uk", name: "uk", criteria: { institutions: { countries: ["GB"] } } },
        { id: "uni", name: "uni", criteria: { institutions: { types: ["university"], includeSuffixRules: false } } }
      ]
    })
    if (!loaded.ok) throw new Error("the test config does not load")
    const remembering = new EngineBuilder().engineFor(loaded.config)
    const forgetting = new EngineBuilder({ rememberVerdicts: false }).engineFor(loaded.config)
    if (!("targetGroups" in remembering)) throw remembering
    if (!("targetGroups" in forgetting)) throw forgetting
    const emails = ["jane@mit.edu", "li@cs.ox.ac.uk", "sam@ox.ac.uk", "pat@newcollege.edu", "x@gmail.com", "jo@mit.edu"]
    for (const id of ["uk", "uni"]) {
      for (const email of [...emails, ...emails]) {
        expect(forgetting.validate(email, id)).toEqual(remembering.validate(email, id))
      }
    }
    expect(remembering.context.directory.memoized).toBeGreaterThan(0)
    expect(remembering.targetGroups.get("uk")!.verdicts.size).toBeGreaterThan(0)
    expect(forgetting.context.directory.memoized).toBe(0)
    expect(forgetting.targetGroups.get("uk")!.verdicts.size).toBe(0)
    expect(forgetting.targetGroups.get("uni")!.verdicts.size).toBe(0)
  })
})
