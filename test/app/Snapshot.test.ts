import { writeFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { describe, expect, it } from "vitest"
import { LiveSnapshot, type ReloadOutcome } from "../../src/app/Snapshot.ts"
import { directorySource } from "../../src/app/sources.ts"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import { makeDirs, ukGroupYaml, validConfig } from "../config/configFiles.ts"

const start = (watch = false, onReload?: (outcome: ReloadOutcome) => void) => {
  const dirs = makeDirs(validConfig)
  const live = LiveSnapshot.loadSync(directorySource({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} }), {
    watch,
    onReload,
    debounceMs: 50
  })
  if (live instanceof InvalidConfiguration) throw live
  return { live, ...dirs }
}

const validate = (live: LiveSnapshot, email: string) => live.current().engine.validate(email, "uk")

/** Resolves with the next reload outcome, or rejects after `ms`. */
const nextReload = (reloads: Array<ReloadOutcome>, count: number, ms = 5000) =>
  new Promise<ReloadOutcome>((resolve, reject) => {
    const started = Date.now()
    const poll = setInterval(() => {
      if (reloads.length >= count) {
        clearInterval(poll)
        resolve(reloads[count - 1]!)
      } else if (Date.now() - started > ms) {
        clearInterval(poll)
        reject(new Error("no reload seen"))
      }
    }, 10)
  })

describe("LiveSnapshot", () => {
  it("refuses to start on an invalid config, with every problem", () => {
    const dirs = makeDirs({ ...validConfig, "offers/spring.yaml": "id: spring\n" })
    const live = LiveSnapshot.loadSync(directorySource({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} }))
    expect(live).toBeInstanceOf(InvalidConfiguration)
    expect((live as InvalidConfiguration).problems.map((p) => p.path)).toEqual([
      "team",
      "name",
      "targetGroups",
      "status"
    ])
  })

  it("applies a valid change atomically; a validation running on the old snapshot is not affected", () => {
    const { live, configDir } = start()
    const before = live.current()
    expect(validate(live, "jane@tum.de").reasonCode).toBe("COUNTRY_NOT_ALLOWED")
    writeFileSync(
      join(configDir, "target-groups/uk.yaml"),
      ukGroupYaml.replace("[GB]", "[GB, DE]").replace("bob@mit.edu", "bob@mit.edu")
    )
    expect(Effect.runSync(live.reload())).toEqual({ ok: true, generation: 2, change: "reload" })
    expect(validate(live, "jane@tum.de").isValid).toBe(true)
    // The snapshot a request took before the change still answers as before.
    expect(before.engine.validate("jane@tum.de", "uk").isValid).toBe(false)
    expect(live.status()).toMatchObject({
      generation: 2,
      stale: false,
      problems: [],
      reloads: { applied: 1, rejected: 0 }
    })
  })

  it("keeps the last good config serving after an invalid change, and reports it", () => {
    const { live, configDir } = start()
    writeFileSync(join(configDir, "target-groups/uk.yaml"), ukGroupYaml.replace("[GB]", "[UK]"))
    const outcome = Effect.runSync(live.reload())
    expect(outcome.ok).toBe(false)
    expect(validate(live, "jane@ox.ac.uk").isValid).toBe(true)
    expect(live.status()).toMatchObject({ generation: 1, stale: true, reloads: { applied: 0, rejected: 1 } })
    expect(live.status().problems[0]).toMatchObject({ line: 5, column: 17, path: "criteria.institutions.countries[0]" })
    // Fixing the file clears the stale state.
    writeFileSync(join(configDir, "target-groups/uk.yaml"), ukGroupYaml)
    expect(Effect.runSync(live.reload())).toEqual({ ok: true, generation: 2, change: "reload" })
    expect(live.status().stale).toBe(false)
  })

  it("watches the files: a saved change is applied, a broken one is rejected", async () => {
    const reloads: Array<ReloadOutcome> = []
    const { live, configDir } = start(true, (outcome) => reloads.push(outcome))
    try {
      await live.watching
      writeFileSync(join(configDir, "target-groups/uk.yaml"), ukGroupYaml.replace("[GB]", "[GB, DE]"))
      expect(await nextReload(reloads, 1)).toMatchObject({ ok: true })
      expect(validate(live, "jane@tum.de").isValid).toBe(true)
      writeFileSync(join(configDir, "offers/broken.yaml"), "id: broken\nstatus: sideways\n")
      expect(await nextReload(reloads, 2)).toMatchObject({ ok: false })
      expect(validate(live, "jane@tum.de").isValid).toBe(true)
      expect(live.status().stale).toBe(true)
    } finally {
      live.close()
    }
  })

  it("applies a change saved after the first load read the file but before the watcher's baseline of it", async () => {
    const dirs = makeDirs(validConfig)
    const files = directorySource({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
    const uk = join(dirs.configDir, "target-groups/uk.yaml")
    let loads = 0
    let scanDone = false
    const source = {
      directories: files.directories,
      // The first load reads the files, then the file changes while this thread is still busy: the watcher's scan,
      // and the baselines taken after it, cannot have run yet (the edit comes a clock tick after the load began).
      load: Effect.tap(files.load, () =>
        Effect.sync(() => {
          if (loads++ > 0) return
          const until = Date.now() + 20
          while (Date.now() < until) {}
          writeFileSync(uk, ukGroupYaml.replace("[GB]", "[GB, DE]"))
          expect(scanDone).toBe(false)
        })
      )
    }
    const reloads: Array<ReloadOutcome> = []
    const live = await Effect.runPromise(
      LiveSnapshot.make(source, { watch: true, debounceMs: 50, onReload: (outcome) => reloads.push(outcome) })
    )
    scanDone = true
    try {
      expect(validate(live, "jane@tum.de").isValid).toBe(false)
      await live.watching
      expect(await nextReload(reloads, 1)).toEqual({ ok: true, generation: 2, change: "reload" })
      expect(validate(live, "jane@tum.de").isValid).toBe(true)
    } finally {
      live.close()
    }
  })

  it("does not reload at start when nothing changed after the load began", async () => {
    const dirs = makeDirs(validConfig)
    const files = directorySource({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
    const reloads: Array<ReloadOutcome> = []
    const live = await Effect.runPromise(
      LiveSnapshot.make(files, { watch: true, debounceMs: 50, onReload: (outcome) => reloads.push(outcome) })
    )
    try {
      await live.watching
      await new Promise((resolve) => setTimeout(resolve, 400))
      expect(reloads).toEqual([])
      expect(live.status().generation).toBe(1)
    } finally {
      live.close()
    }
  })

  it("watches from before the first load ends: a change saved while it runs is applied once the snapshot exists", async () => {
    const dirs = makeDirs(validConfig)
    const files = directorySource({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
    // A first load that takes a second (the daemon loads on a thread of its own); the later ones are prompt.
    let loads = 0
    const source = {
      directories: files.directories,
      load: Effect.andThen(
        Effect.suspend(() => (loads++ === 0 ? Effect.sleep("1 second") : Effect.void)),
        files.load
      )
    }
    const reloads: Array<ReloadOutcome> = []
    const making = Effect.runPromise(
      LiveSnapshot.make(source, { watch: true, debounceMs: 50, onReload: (outcome) => reloads.push(outcome) })
    )
    // The watcher's first scan is done well within the load; then the file changes.
    await new Promise((resolve) => setTimeout(resolve, 600))
    writeFileSync(join(dirs.configDir, "target-groups/uk.yaml"), ukGroupYaml.replace("[GB]", "[GB, DE]"))
    const live = await making
    try {
      expect(await nextReload(reloads, 1)).toEqual({ ok: true, generation: 2, change: "reload" })
      expect(validate(live, "jane@tum.de").isValid).toBe(true)
    } finally {
      live.close()
    }
  })
})
