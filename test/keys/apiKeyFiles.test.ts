import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { createApiKey, ensureBootstrapKey, loadApiKeyIndex, revokeApiKey } from "../../src/app/Keys.ts"
import { loadDirectory } from "../../src/app/sources.ts"
import { allScopes } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import {
  ApiKeyAlreadyRevoked,
  ApiKeyNotFound,
  InvalidApiKeysFile,
  listApiKeys,
  loadApiKeysFile
} from "../../src/keys/apiKeyFiles.ts"
import { hashApiKey } from "../../src/keys/apiKeys.ts"
import { allText } from "../config/configFiles.ts"

const NOW = Date.parse("2026-06-01T12:00:00Z")
const acme = "acme" as TeamId

const directories = () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-keys-"))
  const configDir = join(root, "config")
  const dataDir = join(root, "data")
  mkdirSync(configDir)
  return { root, configDir, dataDir }
}

describe("createApiKey", () => {
  it("stores only the hash, in the config directory when it is writable", () => {
    const dirs = directories()
    const created = createApiKey({ ...dirs, team: acme, scopes: ["offers:read", "jobs:read"], name: "ci", now: NOW })
    expect(created).toMatchObject({
      team: "acme",
      scopes: ["offers:read", "jobs:read"],
      name: "ci",
      createdAt: "2026-06-01T12:00:00.000Z",
      expiresAt: null,
      location: "config",
      file: join(dirs.configDir, "api-keys.yaml")
    })
    const text = readFileSync(created.file, "utf8")
    expect(text).toMatch(/^# .*hashes only/)
    expect(text).toContain("campusgate keys")
    expect(text).toContain(hashApiKey(created.key))
    expect(allText(dirs.root)).not.toContain(created.key)
    expect(allText(dirs.root)).not.toContain(created.key.slice(4))
    const loaded = loadApiKeysFile(created.file)
    expect(loaded.ok && loaded.value.map((r) => r.id)).toEqual([created.id])
  })

  it("appends to the file and sets the expiry", () => {
    const dirs = directories()
    const first = createApiKey({ ...dirs, team: acme, scopes: ["offers:read"], now: NOW })
    const second = createApiKey({ ...dirs, team: acme, scopes: ["offers:write"], expiresInDays: 30, now: NOW })
    const third = createApiKey({ ...dirs, team: acme, scopes: ["jobs:read"], expiresAt: "2027-01-01T00:00:00Z" })
    expect(second.expiresAt).toBe("2026-07-01T12:00:00.000Z")
    expect(third.expiresAt).toBe("2027-01-01T00:00:00Z")
    expect(listApiKeys(dirs).map((k) => k.record.id)).toEqual([first.id, second.id, third.id])
    const text = allText(dirs.root)
    for (const { key } of [first, second, third]) expect(text).not.toContain(key)
  })

  it("falls back to the data directory when the config directory is not writable", () => {
    const dirs = directories()
    const seen: Array<string> = []
    const created = createApiKey({
      ...dirs,
      team: acme,
      scopes: ["offers:read"],
      now: NOW,
      isWritable: (dir) => {
        seen.push(dir)
        return false
      }
    })
    expect(seen).toEqual([dirs.configDir])
    expect(created).toMatchObject({ location: "data", file: join(dirs.dataDir, "api-keys.yaml") })
    expect(readdirSync(dirs.configDir)).toEqual([])
    expect(listApiKeys(dirs)).toMatchObject([{ location: "data", record: { id: created.id } }])
  })

  it("checks the real permissions of the config directory by default", () => {
    const dirs = directories()
    chmodSync(dirs.configDir, 0o555)
    try {
      const created = createApiKey({ ...dirs, team: acme, scopes: ["offers:read"], now: NOW })
      // root ignores permission bits, so there the config directory stays writable
      const expected = process.getuid?.() === 0 ? "config" : "data"
      expect(created.location).toBe(expected)
    } finally {
      chmodSync(dirs.configDir, 0o755)
    }
  })

  it("uses the data directory when the config directory does not exist", () => {
    const dirs = directories()
    const created = createApiKey({ ...dirs, configDir: join(dirs.root, "missing"), team: acme, scopes: ["jobs:read"] })
    expect(created.location).toBe("data")
  })

  it("refuses invalid requests and never overwrites an invalid file", () => {
    const dirs = directories()
    expect(() => createApiKey({ ...dirs, team: "Bad Team" as TeamId, scopes: ["jobs:read"] })).toThrow(
      /Cannot create the API key/
    )
    expect(() => createApiKey({ ...dirs, team: acme, scopes: [] })).toThrow(/at least one scope/)
    expect(() => createApiKey({ ...dirs, team: acme, scopes: ["jobs:read"], expiresInDays: 0 })).toThrow(/above zero/)
    const file = join(dirs.configDir, "api-keys.yaml")
    writeFileSync(file, "keys:\n  - id: nope\n")
    expect(() => createApiKey({ ...dirs, team: acme, scopes: ["jobs:read"] })).toThrow(InvalidApiKeysFile)
    expect(readFileSync(file, "utf8")).toBe("keys:\n  - id: nope\n")
    expect(() => listApiKeys(dirs)).toThrow(/api-keys\.yaml:2:\d+ keys\[0\]\.id: a key id is/)
  })
})

describe("the written files", () => {
  it("load with the rest of the configuration", () => {
    const dirs = directories()
    const inConfig = createApiKey({ ...dirs, team: "default" as TeamId, scopes: ["jobs:read"], expiresInDays: 1 })
    const inData = createApiKey({ ...dirs, team: "default" as TeamId, scopes: allScopes, isWritable: () => false })
    revokeApiKey({ ...dirs, id: inData.id })
    const loaded = loadDirectory({ ...dirs, env: {} })
    expect(loaded.ok && loaded.config.apiKeys.map((key) => key.id)).toEqual([inConfig.id, inData.id])
  })
})

describe("rewriting a file", () => {
  it("keeps the comment lines it starts with", () => {
    const dirs = directories()
    const file = join(dirs.configDir, "api-keys.yaml")
    const header = "# yaml-language-server: $schema=../schemas/api-keys.schema.json\n#\n# Hashes only.\n"
    writeFileSync(file, `${header}keys: []\n`)
    const created = createApiKey({ ...dirs, team: acme, scopes: ["jobs:read"] })
    revokeApiKey({ ...dirs, id: created.id })
    const text = readFileSync(file, "utf8")
    expect(text.startsWith(`${header}keys:\n  - id: ${created.id}\n`)).toBe(true)
    expect(text).toContain("revokedAt:")
  })
})

describe("loadApiKeysFile", () => {
  it("reads a missing or empty file as no keys and reports duplicate ids", () => {
    const dirs = directories()
    const file = join(dirs.configDir, "api-keys.yaml")
    expect(loadApiKeysFile(file)).toEqual({ ok: true, value: [] })
    writeFileSync(file, "# nothing yet\n")
    expect(loadApiKeysFile(file)).toEqual({ ok: true, value: [] })
    const entry = `  - id: key_aaaaaaaaaaaa\n    team: acme\n    scopes: [jobs:read]\n    hash: sha256:${"0".repeat(64)}\n    createdAt: 2026-01-01T00:00:00Z\n`
    writeFileSync(file, `keys:\n${entry}${entry}`)
    const loaded = loadApiKeysFile(file)
    expect(loaded.ok).toBe(false)
    expect(!loaded.ok && loaded.problems[0]).toMatchObject({
      path: "keys[1].id",
      message: expect.stringContaining("duplicate")
    })
  })
})

describe("revokeApiKey", () => {
  it("revokes a key in whichever file holds it, once", () => {
    const dirs = directories()
    const inConfig = createApiKey({ ...dirs, team: acme, scopes: ["jobs:read"], now: NOW })
    const inData = createApiKey({ ...dirs, team: acme, scopes: ["jobs:read"], now: NOW, isWritable: () => false })
    const revoked = revokeApiKey({ ...dirs, id: inData.id, now: NOW + 1000 })
    expect(revoked).toEqual({ id: inData.id, revokedAt: "2026-06-01T12:00:01.000Z", files: [inData.file] })
    const index = loadApiKeyIndex(dirs)
    expect(index.verify(inData.key, NOW + 2000)).toEqual({ ok: false, reason: "revoked" })
    expect(index.verify(inConfig.key, NOW + 2000)).toMatchObject({ ok: true, record: { id: inConfig.id } })
    expect(() => revokeApiKey({ ...dirs, id: inData.id })).toThrow(ApiKeyAlreadyRevoked)
    expect(() => revokeApiKey({ ...dirs, id: "key_doesnotexist" })).toThrow(ApiKeyNotFound)
    expect(() => revokeApiKey({ ...dirs, id: "key_doesnotexist" })).toThrow('There is no API key "key_doesnotexist".')
  })
})

describe("listApiKeys", () => {
  it("lists both files, config first, with where each key is stored", () => {
    const dirs = directories()
    expect(listApiKeys(dirs)).toEqual([])
    const data = createApiKey({ ...dirs, team: acme, scopes: ["jobs:read"], isWritable: () => false })
    const config = createApiKey({ ...dirs, team: acme, scopes: ["offers:read"] })
    expect(listApiKeys(dirs).map((k) => [k.record.id, k.location])).toEqual([
      [config.id, "config"],
      [data.id, "data"]
    ])
  })
})

describe("ensureBootstrapKey", () => {
  it("creates one all-scope key in the data directory when there are none", () => {
    const dirs = directories()
    const result = ensureBootstrapKey({ ...dirs, team: acme, now: NOW })
    expect(result.created).toBe(true)
    if (!result.created) return
    expect(result).toMatchObject({ team: "acme", scopes: allScopes, location: "data" })
    expect(result.file).toBe(join(dirs.dataDir, "api-keys.yaml"))
    expect(readdirSync(dirs.configDir)).toEqual([])
    expect(allText(dirs.root)).not.toContain(result.key)
    expect(loadApiKeyIndex(dirs).verify(result.key, NOW)).toMatchObject({ ok: true })
    expect(ensureBootstrapKey({ ...dirs, team: acme, now: NOW })).toEqual({ created: false })
    expect(listApiKeys(dirs)).toHaveLength(1)
  })

  it("does nothing when a key exists in either directory, even a revoked one", () => {
    const dirs = directories()
    const key = createApiKey({ ...dirs, team: acme, scopes: ["jobs:read"] })
    revokeApiKey({ ...dirs, id: key.id })
    expect(ensureBootstrapKey({ ...dirs, team: acme })).toEqual({ created: false })
    expect(listApiKeys(dirs)).toHaveLength(1)
  })
})
