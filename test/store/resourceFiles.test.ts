import { spawn } from "node:child_process"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/config/loadConfig.ts"
import {
  isApiWritable,
  removeResource,
  resourcePath,
  saveOffer,
  saveTargetGroup
} from "../../src/store/resourceFiles.ts"
import { makeDirs, validConfig } from "../config/configFiles.ts"

const load = (dirs: { configDir: string; dataDir: string }) => {
  const result = loadConfig({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.config
}

describe("API-created resources", () => {
  it("are written in the config format and loaded back with the config; config files stay read-only", () => {
    const dirs = makeDirs(validConfig)
    const before = load(dirs)
    const group = { ...before.targetGroups[0]!, id: "eu" as never, name: "EU students" }
    saveTargetGroup(dirs.dataDir, group)
    saveOffer(dirs.dataDir, { ...before.offers[0]!, id: "summer" as never, targetGroups: ["eu" as never] })
    const text = readFileSync(resourcePath(dirs.dataDir, "targetGroup", "eu"), "utf8")
    expect(text).toMatch(/^# Created through the Campusgate API/)
    const after = load(dirs)
    expect(after.targetGroups.find((g) => g.id === "eu")).toEqual(group)
    expect(after.offers.map((o) => o.id)).toEqual(["spring", "summer"])
    expect(isApiWritable(after, "targetGroup", "eu")).toBe(true)
    expect(isApiWritable(after, "targetGroup", "uk")).toBe(false)
    expect(isApiWritable(after, "offer", "new-one")).toBe(true)
    removeResource(dirs.dataDir, "offer", "summer")
    expect(load(dirs).offers.map((o) => o.id)).toEqual(["spring"])
  })

  it("survive a crash mid-write: the file is one whole version, leftovers are ignored at load", async () => {
    const dirs = makeDirs(validConfig)
    const writer = spawn(process.execPath, [fileURLToPath(new URL("crashWriter.ts", import.meta.url)), dirs.dataDir])
    await new Promise<void>((resolve) => writer.stdout.once("data", () => resolve()))
    await new Promise((resolve) => setTimeout(resolve, 300))
    writer.kill("SIGKILL")
    await new Promise((resolve) => writer.once("exit", resolve))
    const directory = join(dirs.dataDir, "target-groups")
    const text = readFileSync(join(directory, "crash.yaml"), "utf8")
    expect(text).toMatch(/^name: (first|second)$/m)
    const config = load(dirs)
    const group = config.targetGroups.find((g) => g.id === "crash")!
    expect(group.description).toBe(`${group.name} ${"x".repeat(200_000)}`)
    // Whatever temporary files the kill left behind were not loaded as resources.
    expect(readdirSync(directory).filter((name) => !name.endsWith(".tmp"))).toEqual(["crash.yaml"])
  })
})
