/**
 * campusgate.yaml read alone (the data directory, the log and store
 * settings before the configuration loads): each read sees the file as it
 * is now, and a problem names the file it is in.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadSettings } from "../../src/config/settingsFile.ts"
import type { ConfigurationProblem } from "../../src/domain/errors.ts"
import { makeDirs } from "./configFiles.ts"

describe("loadSettings", () => {
  it("reads the file as it is at each call", () => {
    const { configDir } = makeDirs({ "campusgate.yaml": "logging:\n  level: warn\n" })
    expect(loadSettings(configDir, {}, []).settings.logging.level).toBe("warn")
    expect(loadSettings(configDir, {}, []).settings.logging.level).toBe("warn")
    writeFileSync(join(configDir, "campusgate.yaml"), "logging:\n  level: debug\n")
    expect(loadSettings(configDir, {}, []).settings.logging.level).toBe("debug")
  })

  it("names, in each problem, the file of that call, for the same text in two directories", () => {
    const text = "logging:\n  level: loud\n"
    for (const { configDir } of [makeDirs({ "campusgate.yaml": text }), makeDirs({ "campusgate.yaml": text })]) {
      const problems: Array<ConfigurationProblem> = []
      loadSettings(configDir, {}, problems)
      expect(problems.map((problem) => problem.file)).toEqual([join(configDir, "campusgate.yaml")])
    }
  })
})
