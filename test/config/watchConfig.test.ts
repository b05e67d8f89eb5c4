/**
 * Hot reload never misses an edit, whatever way the file changes: each edit
 * style below must be seen (the snapshot in force changes) within 1 s, and
 * the reload status always tells the current state.
 */
import { execFileSync } from "node:child_process"
import { pbkdf2 } from "node:crypto"
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { createApiKey, revokeApiKey } from "../../src/app/Keys.ts"
import { LiveSnapshot } from "../../src/app/Snapshot.ts"
import { directorySource } from "../../src/app/sources.ts"
import { changedBefore, watchConfigDirectories } from "../../src/config/watchConfig.ts"
import { InvalidConfiguration } from "../../src/domain/errors.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { makeDirs, ukGroupYaml, validConfig } from "./configFiles.ts"

const SEEN_WITHIN_MS = 1000

const opened: Array<LiveSnapshot> = []
afterEach(() => {
  for (const live of opened.splice(0)) live.close()
})

const start = async (files = validConfig) => {
  const dirs = makeDirs(files)
  mkdirSync(dirs.dataDir, { recursive: true })
  const live = LiveSnapshot.loadSync(directorySource({ ...dirs, env: {} }), { watch: true, debounceMs: 50 })
  if (live instanceof InvalidConfiguration) throw live
  opened.push(live)
  await live.watching
  return { live, ...dirs }
}

/** Resolves once `holds` is true, or rejects after `ms` (default: the 1 s the daemon promises). */
const eventually = async (holds: () => boolean, ms = SEEN_WITHIN_MS): Promise<number> => {
  const started = Date.now()
  while (!holds()) {
    if (Date.now() - started > ms) throw new Error(`not seen within ${ms} ms: ${holds.toString()}`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
  return Date.now() - started
}

const accepts = (live: LiveSnapshot, email: string) => live.current().engine.validate(email, "uk").isValid
const countries = (list: string) => ukGroupYaml.replace("[GB]", `[${list}]`)

/** Writes `content` to `path` as editors and `sed -i` do: a temporary file renamed over it. */
const replaceAtomically = (path: string, content: string) => {
  const temporary = `${path}.swp`
  writeFileSync(temporary, content)
  renameSync(temporary, path)
}

describe("hot reload", () => {
  it("sees an in-place write", async () => {
    const { live, configDir } = await start()
    writeFileSync(join(configDir, "target-groups/uk.yaml"), countries("GB, IE"))
    await eventually(() => accepts(live, "jane@tcd.ie"))
  })

  it("sees every edit to a file replaced atomically, again and again, and in place after that", async () => {
    const { live, configDir } = await start()
    const file = join(configDir, "target-groups/uk.yaml")
    replaceAtomically(file, countries("GB, IE"))
    await eventually(() => accepts(live, "jane@tcd.ie"))
    replaceAtomically(file, countries("GB"))
    await eventually(() => !accepts(live, "jane@tcd.ie"))
    replaceAtomically(file, countries("GB, DE"))
    await eventually(() => accepts(live, "jane@tum.de"))
    writeFileSync(file, countries("GB"))
    await eventually(() => !accepts(live, "jane@tum.de"))
  })

  it("sees a file deleted and created again", async () => {
    const { live, configDir } = await start()
    const file = join(configDir, "target-groups/uk.yaml")
    rmSync(file)
    // The offer names the target group, so the config without it is rejected and the old one serves.
    await eventually(() => live.status().stale)
    writeFileSync(file, countries("GB, IE"))
    await eventually(() => accepts(live, "jane@tcd.ie") && !live.status().stale)
    expect(live.status().problems).toEqual([])
  })

  it("sees a git checkout of the directory, both ways", async () => {
    const { live, configDir } = await start()
    const git = (...args: Array<string>) =>
      execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.invalid", ...args], {
        cwd: configDir,
        stdio: "ignore"
      })
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "GB")
    git("checkout", "-qb", "ireland")
    writeFileSync(join(configDir, "target-groups/uk.yaml"), countries("GB, IE"))
    git("commit", "-qam", "IE")
    await eventually(() => accepts(live, "jane@tcd.ie"))
    git("checkout", "-q", "main")
    await eventually(() => !accepts(live, "jane@tcd.ie"))
    git("checkout", "-q", "ireland")
    await eventually(() => accepts(live, "jane@tcd.ie"))
  })

  it("applies the last of ten edits made within 100 ms", async () => {
    const { live, configDir } = await start()
    const file = join(configDir, "target-groups/uk.yaml")
    const lists = ["IE", "DE", "FR", "ES", "IT", "NL", "BE", "AT", "PT", "GB, IE"]
    for (const [i, list] of lists.entries()) {
      if (i % 2 === 0) writeFileSync(file, countries(list))
      else replaceAtomically(file, countries(list))
      await new Promise((resolve) => setTimeout(resolve, 8))
    }
    await eventually(() => accepts(live, "jane@tcd.ie") && accepts(live, "jane@ox.ac.uk"))
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(accepts(live, "jane@tcd.ie")).toBe(true)
    expect(accepts(live, "jane@tum.de")).toBe(false)
  })

  it("sees a new file and a removed file", async () => {
    const { live, configDir } = await start()
    writeFileSync(
      join(configDir, "target-groups/eu.yaml"),
      "id: eu\nname: EU\ncriteria:\n  institutions:\n    countries: [DE]\n"
    )
    await eventually(() => live.current().engine.targetGroups.has("eu"))
    rmSync(join(configDir, "target-groups/eu.yaml"))
    await eventually(() => !live.current().engine.targetGroups.has("eu"))
  })

  it("sees api-keys.yaml revoked twice in a row, and a key created after that", async () => {
    const { live, configDir, dataDir } = await start()
    const dirs = { configDir, dataDir }
    const first = createApiKey({ ...dirs, team: "acme" as TeamId, scopes: ["validate:offers"] })
    const second = createApiKey({ ...dirs, team: "acme" as TeamId, scopes: ["validate:offers"] })
    const works = (key: string) => live.current().keys.verify(key, Date.now()).ok
    await eventually(() => works(first.key) && works(second.key))
    revokeApiKey({ ...dirs, id: first.id })
    await eventually(() => !works(first.key))
    revokeApiKey({ ...dirs, id: second.id })
    await eventually(() => !works(second.key))
    const third = createApiKey({ ...dirs, team: "acme" as TeamId, scopes: ["validate:offers"] })
    await eventually(() => works(third.key))
  })

  it("keeps the status current: stale while a broken file serves the old config, fresh once it is fixed", async () => {
    const { live, configDir } = await start()
    const file = join(configDir, "target-groups/uk.yaml")
    replaceAtomically(file, countries("UK"))
    await eventually(() => live.status().stale)
    expect(live.status().problems[0]).toMatchObject({ path: "criteria.institutions.countries[0]" })
    expect(accepts(live, "jane@ox.ac.uk")).toBe(true)
    replaceAtomically(file, countries("GB, IE"))
    await eventually(() => !live.status().stale && accepts(live, "jane@tcd.ie"))
    expect(live.status().problems).toEqual([])
  })
})

describe("the watcher's readiness", () => {
  it("sees an edit made the moment it is ready, while libuv's thread pool is busy", async () => {
    // Each watched path's first stat, the baseline later ones are compared with, runs on the thread pool;
    // kept busy, that stat would come after an edit made at once and take the edit for the baseline.
    let busy = true
    const occupy = (): void => {
      if (busy) pbkdf2("x", "y", 20_000, 32, "sha256", occupy)
    }
    for (let i = 0; i < 8; i++) occupy()
    try {
      for (let round = 0; round < 3; round++) {
        const { configDir } = makeDirs(validConfig)
        let seen = false
        const watcher = watchConfigDirectories([configDir], 20, () => {
          seen = true
        })
        try {
          await watcher.ready
          writeFileSync(join(configDir, "target-groups/uk.yaml"), countries("GB, IE"))
          await eventually(() => seen, 2000)
        } finally {
          watcher.close()
        }
      }
    } finally {
      busy = false
    }
  })
})

describe("changes made before the baselines", () => {
  it("names files modified since, and entries added to or removed from a directory modified since", async () => {
    const { configDir } = makeDirs(validConfig)
    const groups = join(configDir, "target-groups")
    const offers = join(configDir, "offers")
    writeFileSync(join(groups, "de.yaml"), "id: de\n")
    writeFileSync(join(groups, ".hidden.yaml"), "")
    rmSync(join(groups, "uk.yaml"))
    const since = 1_000
    const baselines = new Map([
      [configDir, { mtimeMs: 0, directory: true }],
      [groups, { mtimeMs: since, directory: true }],
      [offers, { mtimeMs: since - 1, directory: true }],
      [join(offers, "spring.yaml"), { mtimeMs: since + 5, directory: false }],
      [join(configDir, "campusgate.yaml"), { mtimeMs: since - 1, directory: false }]
    ])
    const watched = {
      [configDir]: ["campusgate.yaml", "offers", "target-groups"],
      [groups]: ["uk.yaml"],
      [offers]: ["spring.yaml"]
    }
    expect((await changedBefore([configDir], baselines, watched, since)).sort()).toEqual(
      [join(groups, "de.yaml"), join(groups, "uk.yaml"), join(offers, "spring.yaml")].sort()
    )
  })
})
