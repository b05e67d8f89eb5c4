import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/config/loadConfig.ts"
import { reviewedYaml } from "../../src/config/reviewedDatasets.ts"
import { universityApproval } from "../fixtures.ts"
import { makeDirs, validConfig } from "./configFiles.ts"

const approval = (team: string, domain: string, name = "Hochschule Musterstadt") =>
  universityApproval(team, domain, name)

describe("the reviewed dataset", () => {
  it("is read from the config directory and the data directory, one approval per team and domain", () => {
    const dirs = makeDirs(
      { ...validConfig, "datasets/reviewed.yaml": reviewedYaml([approval("acme", "hochschule-musterstadt.de")]) },
      { "reviewed.yaml": reviewedYaml([approval("globex", "kunstakademie-beispiel.de")]) }
    )
    const loaded = loadConfig(dirs)
    expect(loaded.ok).toBe(true)
    if (!loaded.ok) return
    expect(loaded.config.reviewed).toEqual([
      approval("acme", "hochschule-musterstadt.de"),
      approval("globex", "kunstakademie-beispiel.de")
    ])
  })

  it("takes the store's approvals last and leaves out what the store rejected", () => {
    const dirs = makeDirs({
      ...validConfig,
      "datasets/reviewed.yaml": reviewedYaml([
        approval("acme", "hochschule-musterstadt.de"),
        approval("acme", "kunstakademie-beispiel.de")
      ])
    })
    const loaded = loadConfig(dirs, {
      targetGroups: [],
      offers: [],
      apiKeys: [],
      reviewed: [
        {
          location: "review store (approvals)",
          text: reviewedYaml([
            approval("acme", "hochschule-musterstadt.de", "Renamed"),
            approval("gone-team", "x-college.de")
          ])
        }
      ],
      reviewedRejected: ["acme/kunstakademie-beispiel.de"]
    })
    expect(loaded.ok).toBe(true)
    if (!loaded.ok) return
    expect(loaded.config.reviewed).toEqual([approval("acme", "hochschule-musterstadt.de", "Renamed")])
  })

  it("reports a bad entry and an undeclared team with file, line and field", () => {
    const dirs = makeDirs({
      ...validConfig,
      "datasets/reviewed.yaml": `- name: Hochschule Musterstadt
  domains: [hochschule-musterstadt.de]
  type: castle
  team: acme
  approvedBy: key_abc
  approvedAt: "2026-11-29T01:00:00.000Z"
`
    })
    const loaded = loadConfig(dirs)
    expect(loaded.ok).toBe(false)
    if (loaded.ok) return
    expect(loaded.problems).toEqual([
      expect.objectContaining({ file: expect.stringContaining("reviewed.yaml"), line: 3, path: "[0].type" })
    ])
    const undeclared = makeDirs({
      ...validConfig,
      "datasets/reviewed.yaml": reviewedYaml([approval("initech", "hochschule-musterstadt.de")])
    })
    const second = loadConfig(undeclared)
    expect(second.ok).toBe(false)
    if (second.ok) return
    expect(second.problems).toEqual([
      expect.objectContaining({
        file: expect.stringContaining("reviewed.yaml"),
        line: expect.any(Number),
        message: expect.stringContaining('team "initech"')
      })
    ])
  })
})
