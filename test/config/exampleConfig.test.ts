/**
 * The example configurations (`config/`, served by the daemon's first
 * command, and `examples/gitops/`) must stay valid: every file decodes with
 * its schema (unknown keys are errors), references hold, and each target
 * group's examples are what the real engine, with the built-in data,
 * answers.
 */
import { spawnSync } from "node:child_process"
import { cpSync, mkdtempSync, readdirSync, readFileSync, symlinkSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, extname, join, relative, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import type { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { jsonSchemas } from "../../src/config/jsonSchema.ts"
import { Settings } from "../../src/config/Settings.ts"
import { decodeYaml } from "../../src/config/yamlDecode.ts"
import { ApiKeysFile } from "../../src/domain/ApiKey.ts"
import { effectiveStatus, Offer } from "../../src/domain/Offer.ts"
import { TargetGroup } from "../../src/domain/TargetGroup.ts"
import { createCampusgate, type DatasetFormat } from "../../src/index.ts"

const repo = fileURLToPath(new URL("../../", import.meta.url))
const formats: Record<string, DatasetFormat> = { ".json": "hipo", ".csv": "csv", ".yaml": "yaml", ".yml": "yaml" }

const decodeFile = <S extends Schema.ConstraintDecoder<unknown>>(schema: S, path: string): S["Type"] => {
  const decoded = decodeYaml(schema, relative(repo, path), readFileSync(path, "utf8"))
  if (!decoded.ok) throw new Error(JSON.stringify(decoded.problems, null, 2))
  return decoded.value
}

const yamlFiles = (dir: string): Array<string> =>
  readdirSync(dir)
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => join(dir, name))

const load = (dir: string) => {
  const settings = decodeFile(Settings, join(dir, "campusgate.yaml"))
  const groupFiles = yamlFiles(join(dir, "target-groups"))
  const offerFiles = yamlFiles(join(dir, "offers"))
  return {
    settings,
    groupFiles,
    offerFiles,
    targetGroups: groupFiles.map((path) => decodeFile(TargetGroup, path)),
    offers: offerFiles.map((path) => decodeFile(Offer, path)),
    datasets: settings.datasets.map((path) => ({
      name: path,
      format: formats[extname(path)]!,
      content: readFileSync(resolve(dir, path), "utf8")
    }))
  }
}

type Loaded = ReturnType<typeof load>

/** The checks `campusgate check` makes beyond each file's schema. */
const referenceProblems = ({ settings, targetGroups, offers, groupFiles, offerFiles }: Loaded): Array<string> => {
  const problems: Array<string> = []
  const teams = new Set(settings.teams.map((team) => team.id))
  const groups = new Map(targetGroups.map((group) => [group.id, group]))
  if (groups.size !== targetGroups.length) problems.push("duplicate target-group ids")
  if (new Set(offers.map((offer) => offer.id)).size !== offers.length) problems.push("duplicate offer ids")
  targetGroups.forEach((group, i) => {
    if (group.team !== undefined && !teams.has(group.team)) problems.push(`${group.id}: unknown team ${group.team}`)
    if (!groupFiles[i]!.endsWith(`/${group.id}.yaml`)) problems.push(`${groupFiles[i]}: file not named after its id`)
  })
  offers.forEach((offer, i) => {
    if (!teams.has(offer.team)) problems.push(`${offer.id}: unknown team ${offer.team}`)
    if (!offerFiles[i]!.endsWith(`/${offer.id}.yaml`)) problems.push(`${offerFiles[i]}: file not named after its id`)
    for (const id of offer.targetGroups) {
      const group = groups.get(id)
      if (group === undefined) problems.push(`${offer.id}: no target group ${id}`)
      else if (group.team !== undefined && group.team !== offer.team) problems.push(`${offer.id}: ${id} is not visible`)
    }
  })
  return problems
}

/** Each example whose verdict differs from what the group says, with the engine's reason. */
const exampleMismatches = async ({ targetGroups, offers, datasets }: Loaded): Promise<Array<string>> => {
  const cg = await createCampusgate({ targetGroups, offers, datasets })
  try {
    return targetGroups.flatMap((group) =>
      [
        ...(group.examples?.valid ?? []).map((email) => [email, true] as const),
        ...(group.examples?.invalid ?? []).map((email) => [email, false] as const)
      ].flatMap(([email, expected]) => {
        const result = cg.validate(email, group.id)
        return result.isValid === expected
          ? []
          : [
              `${group.id}: ${email} is ${result.isValid ? "valid" : `invalid (${result.reasonCode}: ${result.reason})`}`
            ]
      })
    )
  } finally {
    await cg.close()
  }
}

describe("config/ (the example the daemon serves)", () => {
  const dir = join(repo, "config")
  const loaded = load(dir)

  it("decodes every file with its schema, unknown keys rejected", () => {
    expect(decodeFile(ApiKeysFile, join(dir, "api-keys.yaml"))).toEqual({ keys: [] })
    expect(loaded.settings.teams.map((team) => team.id)).toEqual(["acme", "globex"])
    expect(loaded.settings.teams.every((team) => team.name !== undefined)).toBe(true)
    expect(referenceProblems(loaded)).toEqual([])
  })

  it("demonstrates every criterion type, shared and team-owned groups, and every kind of offer", () => {
    const { targetGroups, offers } = loaded
    const some = (test: (group: TargetGroup) => boolean) => targetGroups.some(test)
    expect(some((g) => (g.criteria.institutions?.types?.length ?? 0) > 0)).toBe(true)
    expect(some((g) => g.criteria.institutions?.countries?.includes("GB" as never) === true)).toBe(true)
    expect(some((g) => (g.criteria.institutions?.regions?.length ?? 0) > 0)).toBe(true)
    expect(some((g) => (g.criteria.domains?.allow.length ?? 0) > 0 && (g.criteria.domains?.deny.length ?? 0) > 0)).toBe(
      true
    )
    expect(
      some((g) => (g.criteria.patterns?.allow.length ?? 0) > 0 && (g.criteria.patterns?.deny.length ?? 0) > 0)
    ).toBe(true)
    expect(some((g) => g.criteria.email.rejectFreeMail && g.criteria.email.rejectRoleAccounts)).toBe(true)
    expect(some((g) => g.team === undefined)).toBe(true)
    expect(new Set(targetGroups.flatMap((g) => (g.team === undefined ? [] : [g.team])))).toEqual(
      new Set(["acme", "globex"])
    )
    expect(
      targetGroups.every((g) => (g.examples?.valid.length ?? 0) > 0 && (g.examples?.invalid.length ?? 0) > 0)
    ).toBe(true)
    expect(new Set(offers.map((offer) => offer.team))).toEqual(new Set(["acme", "globex"]))
    expect(new Set(offers.map((offer) => offer.status))).toEqual(new Set(["active", "paused", "draft"]))
    const windowed = offers.find((offer) => offer.startsAt !== undefined && offer.endsAt !== undefined)
    expect(windowed?.status).toBe("active")
    expect(effectiveStatus(windowed!, Date.parse("2000-01-01T00:00:00Z"))).toBe("scheduled")
    expect(effectiveStatus(windowed!, Date.parse("2100-01-01T00:00:00Z"))).toBe("expired")
  })

  it("starts every YAML file with a yaml-language-server line naming its JSON schema in dist/schemas", () => {
    const fileNames = new Set(jsonSchemas().map((file) => file.fileName))
    const kinds: Array<readonly [string, string]> = [
      [join(dir, "campusgate.yaml"), "campusgate.schema.json"],
      [join(dir, "api-keys.yaml"), "api-keys.schema.json"],
      ...loaded.groupFiles.map((path) => [path, "target-group.schema.json"] as const),
      ...loaded.offerFiles.map((path) => [path, "offer.schema.json"] as const)
    ]
    for (const [path, fileName] of kinds) {
      expect(fileNames.has(fileName)).toBe(true)
      const first = readFileSync(path, "utf8").split("\n")[0]!
      const match = /^# yaml-language-server: \$schema=(\S+)$/.exec(first)
      expect(match, path).not.toBeNull()
      expect(resolve(dirname(path), match![1]!), path).toBe(join(repo, "dist", "schemas", fileName))
    }
  })

  it("has target-group examples that the engine, with the built-in data, agrees with", async () => {
    expect(await exampleMismatches(loaded)).toEqual([])
  })
})

describe("examples/gitops", () => {
  const dir = join(repo, "examples", "gitops")
  const loaded = load(dir)

  it("decodes, references hold, and the examples agree with the engine", async () => {
    expect(referenceProblems(loaded)).toEqual([])
    expect(loaded.targetGroups.length).toBeGreaterThan(0)
    expect(loaded.offers.length).toBeGreaterThan(0)
    expect(await exampleMismatches(loaded)).toEqual([])
  })

  it("checks pull requests with campusgate check --format github", () => {
    const workflow = readFileSync(join(dir, ".github", "workflows", "campusgate-check.yml"), "utf8")
    expect(workflow).toContain("pull_request")
    expect(workflow).toContain("actions/setup-node")
    expect(workflow).toMatch(/node-version: 24/)
    expect(workflow).toContain("npx campusgate check --config . --format github")
  })

  it("installs campusgate from this repository, as its README says, and checks itself with it", () => {
    // The example where it lies relative to a package root (file:../..), in a directory of its own.
    const root = mkdtempSync(join(tmpdir(), "campusgate-gitops-"))
    for (const entry of ["package.json", "dist", "node_modules", "scripts"])
      symlinkSync(join(repo, entry), join(root, entry))
    const copy = join(root, "examples", "gitops")
    cpSync(dir, copy, {
      recursive: true,
      filter: (path) => !/node_modules|package-lock\.json/.test(relative(dir, path))
    })
    const run = (command: string, args: Array<string>) =>
      spawnSync(command, args, { cwd: copy, encoding: "utf8", env: { ...process.env, CAMPUSGATE_CONFIG: "" } })
    const install = run("npm", ["install", "--no-audit", "--no-fund", "--ignore-scripts", "--offline"])
    expect(install.status, install.stderr).toBe(0)
    const check = run(process.execPath, [
      join(copy, "node_modules", "campusgate", "dist", "cli", "bin.js"),
      "check",
      "--config",
      "."
    ])
    expect(check.stdout).toMatch(/^ok: 2 target groups, 1 offer/)
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toMatch(/^node_modules\/$/m)
  })
})
