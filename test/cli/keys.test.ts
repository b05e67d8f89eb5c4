import { spawn, spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { createApiKey, loadApiKeyIndex } from "../../src/app/Keys.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { allText } from "../config/configFiles.ts"

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))

const setup = () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-cli-keys-"))
  const config = join(root, "config")
  const data = join(root, "data")
  mkdirSync(config)
  writeFileSync(join(config, "campusgate.yaml"), "teams:\n  - id: acme\n")
  const env = { ...process.env }
  delete env.CAMPUSGATE_CONFIG
  delete env.CAMPUSGATE_DATA
  const run = (...args: Array<string>) => {
    const [command, ...rest] = args
    return spawnSync(process.execPath, [main, "keys", command!, "--config", config, "--data", data, ...rest], {
      encoding: "utf8",
      env
    })
  }
  return { root, config, data, env, run }
}

describe("campusgate keys", () => {
  it("creates a key and prints exactly id, key, team, scopes and expiresAt with --json", () => {
    const { root, config, run } = setup()
    const result = run("create", "--team", "acme", "--scope", "offers:read", "--scope", "jobs:read", "--json")
    expect(result.stderr).toBe("")
    expect(result.status).toBe(0)
    const created = JSON.parse(result.stdout)
    expect(Object.keys(created)).toEqual(["id", "key", "team", "scopes", "expiresAt"])
    expect(created).toMatchObject({ team: "acme", scopes: ["offers:read", "jobs:read"], expiresAt: null })
    expect(created.id).toMatch(/^key_[a-z2-7]{12}$/)
    expect(created.key).toMatch(/^cgk_[A-Za-z0-9_-]{43}$/)
    // In the data directory: a key made to try the daemon never lands in the config repository.
    expect(readFileSync(join(root, "data", "api-keys.yaml"), "utf8")).toContain(`id: ${created.id}`)
    expect(readdirSync(config)).toEqual(["campusgate.yaml"])
    expect(allText(root)).not.toContain(created.key)
    // Asked for, into the config directory's file, to commit it.
    const committed = JSON.parse(
      run("create", "--team", "acme", "--scope", "offers:read", "--config-file", "--json").stdout
    )
    expect(readFileSync(join(config, "api-keys.yaml"), "utf8")).toContain(`id: ${committed.id}`)
  })

  it("prints the key once, on its own line, with a warning, in human output", () => {
    const { root, run } = setup()
    const result = run("create", "--team", "acme", "--scope", "jobs:read", "--expires", "90d", "--name", "ci")
    expect(result.status).toBe(0)
    const lines = result.stdout.split("\n")
    const key = lines.find((line) => /^cgk_[A-Za-z0-9_-]{43}$/.test(line))
    expect(key).toBeDefined()
    expect(result.stdout).toContain("will not be shown again")
    expect(result.stdout).toMatch(/team: +acme/)
    expect(result.stdout).toMatch(/scopes: +jobs:read/)
    expect(result.stdout).toMatch(/expires: +\d{4}-\d{2}-\d{2}T/)
    expect(result.stdout).toMatch(/file: +.*api-keys\.yaml/)
    expect(allText(root)).not.toContain(key)
  })

  it("lists keys without hashes, revokes one, and shows the new status", () => {
    const { run } = setup()
    const created = JSON.parse(run("create", "--team", "acme", "--scope", "offers:write", "--json").stdout)
    const listed = run("list")
    expect(listed.status).toBe(0)
    expect(listed.stdout).toMatch(/^ID +NAME +TEAM +SCOPES +CREATED +EXPIRES +STATUS +FILE/)
    expect(listed.stdout).toContain(created.id)
    expect(listed.stdout).toMatch(/offers:write .* never +active/)
    expect(listed.stdout).not.toContain("sha256:")

    const revoked = run("revoke", created.id)
    expect(revoked.status).toBe(0)
    expect(revoked.stdout).toContain(`Revoked ${created.id}`)
    const json = JSON.parse(run("list", "--json").stdout)
    expect(json).toHaveLength(1)
    expect(json[0]).toMatchObject({
      id: created.id,
      team: "acme",
      status: "revoked",
      hash: expect.stringMatching(/^sha256:/)
    })
    expect(json[0].revokedAt).toEqual(expect.any(String))

    const again = run("revoke", created.id)
    expect(again.status).not.toBe(0)
    expect(again.stderr).toContain("already revoked")
    const unknown = run("revoke", "key_nosuchkey1")
    expect(unknown.status).not.toBe(0)
    expect(unknown.stderr).toContain('There is no API key "key_nosuchkey1"')
  })

  it("rejects a bad scope, team or expiry with a clear message and writes nothing", () => {
    const { root, run } = setup()
    const scope = run("create", "--team", "acme", "--scope", "offers:delete")
    expect(scope.status).not.toBe(0)
    expect(scope.stderr).toContain('Unknown scope "offers:delete"')
    for (const valid of allScopes) expect(scope.stderr).toContain(valid)
    const team = run("create", "--team", "Not A Team", "--scope", "jobs:read")
    expect(team.status).not.toBe(0)
    expect(team.stderr).toContain('Invalid --team "Not A Team"')
    const expiry = run("create", "--team", "acme", "--scope", "jobs:read", "--expires", "someday")
    expect(expiry.status).not.toBe(0)
    expect(expiry.stderr).toContain('Invalid expiry "someday"')
    const missing = run("create", "--team", "acme")
    expect(missing.status).not.toBe(0)
    expect(missing.stderr).toContain("scope")
    const undeclared = run("create", "--team", "globex", "--scope", "jobs:read")
    expect(undeclared.status).not.toBe(0)
    expect(undeclared.stderr).toContain('Unknown team "globex": declare it under teams in campusgate.yaml')
    expect(undeclared.stderr).toContain("known: default, acme")
    expect(readdirSync(root).flatMap((dir) => readdirSync(join(root, dir)))).toEqual(["campusgate.yaml"])
  })

  it("takes the data directory from campusgate.yaml when --data is not given", () => {
    const { root, config, env } = setup()
    writeFileSync(join(config, "campusgate.yaml"), "dataDir: ../state\n")
    const created = createApiKey({
      configDir: config,
      dataDir: join(root, "state"),
      team: "default" as TeamId,
      scopes: ["jobs:read"],
      isWritable: () => false
    })
    const listed = spawnSync(process.execPath, [main, "keys", "list", "--config", config, "--json"], {
      encoding: "utf8",
      env
    })
    expect(listed.status).toBe(0)
    expect(JSON.parse(listed.stdout)).toMatchObject([
      { id: created.id, team: "default", file: expect.stringContaining("state") }
    ])
  })

  it("reports an invalid api-keys.yaml with its position", () => {
    const { config, run } = setup()
    writeFileSync(join(config, "api-keys.yaml"), "keys:\n  - id: nope\n")
    const result = run("list")
    expect(result.status).not.toBe(0)
    expect(result.stderr).toMatch(/api-keys\.yaml:2:\d+ keys\[0\]\.id/)
  })

  it("shows help for the command and its subcommands", () => {
    const { env } = setup()
    const help = spawnSync(process.execPath, [main, "keys", "--help"], { encoding: "utf8", env })
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/create[\s\S]*list[\s\S]*revoke/)
    const create = spawnSync(process.execPath, [main, "keys", "create", "--help"], { encoding: "utf8", env })
    expect(create.status).toBe(0)
    expect(create.stdout).toMatch(/--team[\s\S]*--scope[\s\S]*--expires/)
    expect(create.stdout).toContain("--config")
    expect(create.stdout).toContain("--data")
  })
})

describe("campusgate keys run at the same time", () => {
  const runAsync = (setupResult: ReturnType<typeof setup>, ...args: Array<string>) =>
    new Promise<{ status: number | null; stdout: string }>((resolve) => {
      const [command, ...rest] = args
      const child = spawn(
        process.execPath,
        [main, "keys", command!, "--config", setupResult.config, "--data", setupResult.data, ...rest],
        { env: setupResult.env }
      )
      let stdout = ""
      child.stdout.on("data", (chunk) => {
        stdout += String(chunk)
      })
      child.on("close", (status) => resolve({ status, stdout }))
    })

  it("lose no key: every key six concurrent creates print is stored and accepted, and concurrent revokes all apply", async () => {
    const context = setup()
    const created = await Promise.all(
      Array.from({ length: 6 }, () => runAsync(context, "create", "--team", "acme", "--scope", "offers:read", "--json"))
    )
    expect(created.map((result) => result.status)).toEqual([0, 0, 0, 0, 0, 0])
    const keys = created.map((result) => JSON.parse(result.stdout) as { id: string; key: string })
    const index = loadApiKeyIndex({ configDir: context.config, dataDir: context.data })
    for (const { key } of keys) expect(index.verify(key, Date.now()).ok).toBe(true)
    const revoked = await Promise.all(keys.map(({ id }) => runAsync(context, "revoke", id)))
    expect(revoked.map((result) => result.status)).toEqual([0, 0, 0, 0, 0, 0])
    const after = loadApiKeyIndex({ configDir: context.config, dataDir: context.data })
    for (const { key } of keys) expect(after.verify(key, Date.now())).toMatchObject({ ok: false, reason: "revoked" })
    // Twelve CLI processes, six at a time: 24 s on a loaded 2-core machine, past the default 30 s under more load.
  }, 90_000)
})
