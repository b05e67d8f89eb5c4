import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type ConfigLoader, makeThreadConfigLoader } from "../../src/config/loadConfigThread.ts"

const shippedConfig = join(import.meta.dirname, "../../config")
const noDocuments = { targetGroups: [], offers: [], apiKeys: [] }
const location = () => ({
  configDir: shippedConfig,
  dataDir: mkdtempSync(join(tmpdir(), "campusgate-loader-")),
  env: {}
})

const loaders: Array<ConfigLoader> = []
afterEach(async () => {
  await Promise.all(loaders.splice(0).map((loader) => loader.close()))
})

const until = async (condition: () => boolean) => {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 10_000) throw new Error("timed out")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe("the configuration loader thread", () => {
  it("stops once idle, giving its memory back, and the next load starts it again", async () => {
    const loader = makeThreadConfigLoader({ idleMs: 50 })
    loaders.push(loader)
    expect(loader.running).toBe(false)
    const first = await loader.load(location(), noDocuments)
    expect(first.ok).toBe(true)
    await until(() => !loader.running)
    const second = await loader.load(location(), noDocuments)
    expect(second.ok).toBe(true)
    if (first.ok && second.ok)
      expect(second.config.targetGroups.map((g) => g.id)).toEqual(first.config.targetGroups.map((g) => g.id))
  })

  it("kept warm, runs from the start and after its loads, however long idle", async () => {
    const loader = makeThreadConfigLoader({ idleMs: 50, keepWarm: true })
    loaders.push(loader)
    expect(loader.running).toBe(true)
    expect((await loader.load(location(), noDocuments)).ok).toBe(true)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(loader.running).toBe(true)
    expect((await loader.load(location(), noDocuments)).ok).toBe(true)
  })

  it("keeps running between loads that come close together", async () => {
    const loader = makeThreadConfigLoader({ idleMs: 60_000 })
    loaders.push(loader)
    const loads = await Promise.all([loader.load(location(), noDocuments), loader.load(location(), noDocuments)])
    expect(loads.every((load) => load.ok)).toBe(true)
    expect(loader.running).toBe(true)
  })
})
