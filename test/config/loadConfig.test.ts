import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadDirectory } from "../../src/app/sources.ts"
import { type ConfigLoad, loadConfig } from "../../src/config/loadConfig.ts"
import { DecodeCache, decodeYaml, MAX_YAML_BYTES } from "../../src/config/yamlDecode.ts"
import { formatProblem } from "../../src/domain/errors.ts"
import { TargetGroup } from "../../src/domain/TargetGroup.ts"
import { type Files, makeDirs, offerYaml, settingsYaml, ukGroupYaml, validConfig } from "./configFiles.ts"

const load = (
  config: Files,
  data: Files = {},
  env: Record<string, string> = {}
): ConfigLoad & { dirs: ReturnType<typeof makeDirs> } => {
  const dirs = makeDirs(config, data)
  return { ...loadDirectory({ configDir: dirs.configDir, dataDir: dirs.dataDir, env }), dirs }
}

/** Problems as `file:line:col path: message`, with the file relative to the config or data directory. */
const problems = (result: ReturnType<typeof load>): Array<string> => {
  if (result.ok) return []
  return result.problems.map((p) =>
    formatProblem(p).replaceAll(`${result.dirs.configDir}/`, "").replaceAll(`${result.dirs.dataDir}/`, "data:")
  )
}

describe("loadConfig", () => {
  it("loads settings, target groups, offers and their origins", () => {
    const result = load(validConfig)
    expect(result.ok).toBe(true)
    if (!result.ok) return
    const { config } = result
    expect(config.targetGroups.map((g) => g.id)).toEqual(["uk"])
    expect(config.offers.map((o) => o.id)).toEqual(["spring"])
    expect([...config.teams]).toEqual(["default", "acme", "globex"])
    expect(config.settings.server.port).toBe(8080)
    expect(config.dataDir).toBe(result.dirs.dataDir)
    expect(config.origins.offers.get("spring")).toMatchObject({ store: "config" })
  })

  it("points a bad country code at its file, line, column and field, with a suggestion", () => {
    const result = load({
      ...validConfig,
      "target-groups/uk.yaml": "id: uk\nname: UK\ncriteria:\n  institutions:\n    countries:\n      - GB\n      - UK\n"
    })
    expect(problems(result)).toEqual([
      'target-groups/uk.yaml:7:9 criteria.institutions.countries[1]: "UK" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)'
    ])
  })

  it("rejects unknown keys, so a typo never passes silently", () => {
    const result = load({ ...validConfig, "target-groups/uk.yaml": ukGroupYaml.replace("countries", "countires") })
    expect(problems(result)).toEqual([
      'target-groups/uk.yaml:5:5 criteria.institutions.countires: unknown key "countires" (did you mean "countries"?)'
    ])
  })

  it("reports wrong types and missing keys", () => {
    const result = load({
      ...validConfig,
      "target-groups/uk.yaml": "id: uk\ncriteria:\n  email:\n    rejectDisposable: sometimes\n"
    })
    expect(problems(result)).toEqual([
      'target-groups/uk.yaml:1:1 name: missing required key "name"',
      'target-groups/uk.yaml:4:23 criteria.email.rejectDisposable: Expected boolean, got "sometimes"'
    ])
  })

  it("reports YAML syntax errors, duplicate keys and a second document with positions", () => {
    const result = load({
      ...validConfig,
      "target-groups/a.yaml": "id: [unclosed\n",
      "target-groups/b.yaml": "id: b\nname: B\nname: again\ncriteria: {}\n",
      "target-groups/c.yaml": "id: c\nname: C\ncriteria: {}\n---\nid: d\n"
    })
    const found = problems(result)
    expect(found).toHaveLength(3)
    expect(found[0]).toMatch(/^target-groups\/a\.yaml:\d+:\d+ \(file\): /)
    expect(found[1]).toBe(
      'target-groups/b.yaml:3:1 name: the key "name" appears twice in the same mapping (first on line 2)'
    )
    expect(found[2]).toBe("target-groups/c.yaml:4:1 (file): one resource per file: remove the second YAML document")
  })

  it("checks cross-references: dangling and invisible target groups, unknown teams, duplicate ids", () => {
    const result = load({
      "campusgate.yaml": settingsYaml,
      "target-groups/uk.yaml": ukGroupYaml,
      "target-groups/globex.yaml": "id: globex-only\nname: G\nteam: globex\ncriteria:\n  institutions: {}\n",
      "target-groups/uk-again.yaml": ukGroupYaml,
      "target-groups/initech.yaml": "id: initech\nname: I\nteam: initech\ncriteria: {}\n",
      "offers/spring.yaml": `${offerYaml}  - nope\n  - globex-only\n`
    })
    const found = problems(result).join("\n")
    // Files load in name order: uk-again.yaml comes first, so uk.yaml is the duplicate.
    expect(found).toMatch(
      /^target-groups\/uk\.yaml:1:5 id: target group "uk" is already defined in target-groups\/uk-again\.yaml$/m
    )
    expect(found).toMatch(
      /target-groups\/initech\.yaml:3:7 team: unknown team "initech": declare it under teams in campusgate\.yaml \(known: default, acme, globex\)/
    )
    expect(found).toMatch(/offers\/spring\.yaml:7:5 targetGroups\[1\]: no target group "nope"/)
    expect(found).toMatch(
      /offers\/spring\.yaml:8:5 targetGroups\[2\]: target group "globex-only" belongs to team "globex", not to this offer's team "acme"/
    )
  })

  it("does not report references to a target group whose own file failed", () => {
    const result = load({ ...validConfig, "target-groups/uk.yaml": `${ukGroupYaml}colour: blue\n` })
    expect(problems(result)).toEqual([
      'target-groups/uk.yaml:9:1 colour: unknown key "colour" (allowed here: id, name, description, team, criteria, examples)'
    ])
  })

  it("loads API-created resources from the data directory, ignoring files left by an interrupted write", () => {
    const result = load(validConfig, {
      "target-groups/eu.yaml": "id: eu\nname: EU\ncriteria:\n  institutions:\n    countries: [DE, FR]\n",
      "target-groups/.eu2.yaml.3f2a.tmp": "id: half-writ",
      "offers/.spring2.yaml.9c1d.tmp": ""
    })
    expect(result.ok).toBe(true)
    if (!result.ok) return
    expect(result.config.targetGroups.map((g) => g.id)).toEqual(["uk", "eu"])
    expect(result.config.origins.targetGroups.get("eu")).toMatchObject({ store: "data" })
  })

  it("applies CAMPUSGATE_ environment overrides and reports bad ones", () => {
    const ok = load(
      validConfig,
      {},
      { CAMPUSGATE_PORT: "9090", CAMPUSGATE_HOST: "127.0.0.1", CAMPUSGATE_LOG_LEVEL: "debug" }
    )
    expect(ok.ok && ok.config.settings.server).toMatchObject({ port: 9090, host: "127.0.0.1" })
    expect(ok.ok && ok.config.settings.logging.level).toBe("debug")
    const bad = load(validConfig, {}, { CAMPUSGATE_PORT: "eighty" })
    expect(problems(bad)).toEqual(['environment CAMPUSGATE_PORT: expected a whole number 0-65535, got "eighty"'])
  })

  it("listens on the platform's PORT when CAMPUSGATE_PORT is not set", () => {
    const port = (env: Record<string, string>) => {
      const result = load(validConfig, {}, env)
      return result.ok ? result.config.settings.server.port : problems(result)
    }
    expect(port({ PORT: "3000" })).toBe(3000)
    expect(port({ PORT: "3000", CAMPUSGATE_PORT: "" })).toBe(3000)
    expect(port({ PORT: "3000", CAMPUSGATE_PORT: "9090" })).toBe(9090)
    expect(port({})).toBe(8080)
    expect(port({ PORT: "http" })).toEqual(['environment PORT: expected a whole number 0-65535, got "http"'])
  })

  it("resolves dataDir from campusgate.yaml against the config directory when no flag or variable names one", () => {
    const dirs = makeDirs({ ...validConfig, "campusgate.yaml": `${settingsYaml}dataDir: ../state\n` })
    const result = loadDirectory({ configDir: dirs.configDir, env: {} })
    expect(result.ok && result.config.dataDir).toBe(join(dirs.root, "state"))
  })

  it("reads institution datasets and reports their problems by file and line", () => {
    const dirs = makeDirs({
      ...validConfig,
      "campusgate.yaml": `${settingsYaml}datasets:\n  - partners.csv\n  - missing.csv\n  - partners.txt\n`,
      "partners.csv": "domain,name,country\npartner-college.samples,Partner College,ZZ\n"
    })
    const result = loadDirectory({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
    expect(result.ok).toBe(false)
    if (result.ok) return
    const text = result.problems.map(formatProblem).join("\n")
    expect(text).toMatch(/partners\.csv:2:1 country: "ZZ" is not an ISO 3166-1 alpha-2 code/)
    expect(text).toMatch(/campusgate\.yaml:7:5 datasets\[1\]: "missing\.csv": no such file/)
    expect(text).toMatch(
      /campusgate\.yaml:8:5 datasets\[2\]: "partners\.txt": unknown dataset format; use \.json \(Hipo\), \.csv or \.yaml/
    )
  })

  it("reports a missing config directory instead of throwing", () => {
    const result = loadDirectory({ configDir: "/nonexistent/campusgate-config", env: {} })
    expect(result).toMatchObject({ ok: false, problems: [{ message: "the config directory does not exist" }] })
  })

  it("treats an empty campusgate.yaml as all defaults", () => {
    const dirs = makeDirs({ "campusgate.yaml": "" })
    writeFileSync(join(dirs.configDir, "api-keys.yaml"), "")
    const result = loadDirectory({ configDir: dirs.configDir, dataDir: dirs.dataDir, env: {} })
    expect(result.ok && result.config.settings.rateLimits.bulk).toEqual({ requests: 10, windowSeconds: 60 })
  })
})

describe("loadConfig reports every problem at once", () => {
  it("keeps the teams of a campusgate.yaml with a bad key, so files naming them are not reported", () => {
    const result = load({
      ...validConfig,
      "campusgate.yaml": `${settingsYaml}logging:\n  logEmail: true\nlimits:\n  bulkMaxEmails: lots\n`,
      "target-groups/globex.yaml": "id: globex-only\nname: G\nteam: globex\ncriteria: {}\n"
    })
    expect(problems(result)).toEqual([
      'campusgate.yaml:6:3 logging.logEmail: unknown key "logEmail" (did you mean "logEmails"?)',
      'campusgate.yaml:8:18 limits.bulkMaxEmails: Expected number, got "lots"'
    ])
  })

  it("keeps a team whose entry has a bad key, and still checks the teams named", () => {
    const result = load({
      ...validConfig,
      "campusgate.yaml": "teams:\n  - id: acme\n    nmae: Acme\n",
      "target-groups/initech.yaml": "id: initech\nname: I\nteam: acmee\ncriteria: {}\n"
    })
    expect(problems(result)).toEqual([
      'campusgate.yaml:3:5 teams[0].nmae: unknown key "nmae" (did you mean "name"?)',
      'target-groups/initech.yaml:3:7 team: unknown team "acmee" (did you mean "acme"?): declare it under teams in campusgate.yaml (known: default, acme)'
    ])
  })

  it("checks no team while campusgate.yaml cannot be read at all", () => {
    const result = load({ ...validConfig, "campusgate.yaml": "teams;\n  - id: acme\n" })
    expect(problems(result)).toHaveLength(1)
    expect(problems(result)[0]).toMatch(/^campusgate\.yaml:1:1 \(file\): /)
  })

  it("still checks the references of a file that fails to decode, and suggests the closest names", () => {
    const result = load({
      ...validConfig,
      "offers/spring.yaml": "id: spring\nteam: acmee\nname: S\nstatus: activ\ntargetGroups: [uk, ukk, 7]\n"
    })
    expect(problems(result)).toEqual([
      'offers/spring.yaml:2:7 team: unknown team "acmee" (did you mean "acme"?): declare it under teams in campusgate.yaml (known: default, acme, globex)',
      'offers/spring.yaml:4:9 status: expected one of "draft", "active", "paused", "archived", got "activ" (did you mean "active"?)',
      'offers/spring.yaml:5:20 targetGroups[1]: no target group "ukk" (did you mean "uk"?)',
      "offers/spring.yaml:5:25 targetGroups[2]: Expected string, got 7"
    ])
  })

  it("suggests the key meant in a nested criterion, and lists the allowed keys when none is close", () => {
    const result = load({
      ...validConfig,
      "target-groups/uk.yaml": ukGroupYaml.replace(
        "criteria:\n",
        "criteria:\n  email:\n    rejectRoleAcounts: true\n  colour: blue\n"
      )
    })
    expect(problems(result)).toEqual([
      'target-groups/uk.yaml:5:5 criteria.email.rejectRoleAcounts: unknown key "rejectRoleAcounts" (did you mean "rejectRoleAccounts"?)',
      'target-groups/uk.yaml:6:3 criteria.colour: unknown key "colour" (allowed here: institutions, domains, patterns, email)'
    ])
  })

  it("checks the teams of API keys in a file that fails to decode", () => {
    const result = load({
      ...validConfig,
      "api-keys.yaml":
        "keys:\n  - id: key_a\n    team: acmee\n    scopes: [validate:offers]\n    hash: x\n    createdAt: soon\n"
    })
    const found = problems(result)
    expect(
      found.some((line) =>
        /api-keys\.yaml:3:11 keys\[0\]\.team: unknown team "acmee" \(did you mean "acme"\?\)/.test(line)
      )
    ).toBe(true)
  })
})

describe("loadConfig with a decode cache", () => {
  it("decodes again only the documents that changed, and bounds what one file may cost", () => {
    const dirs = makeDirs(validConfig)
    const cache = new DecodeCache()
    const documents = (text: string) => ({
      targetGroups: [
        { location: join(dirs.dataDir, "target-groups/a.yaml"), text: "id: a\nname: A\ncriteria: {}\n" },
        { location: join(dirs.dataDir, "target-groups/b.yaml"), text }
      ],
      offers: [],
      apiKeys: []
    })
    const first = loadConfig({ ...dirs, env: {} }, documents("id: b\nname: B\ncriteria: {}\n"), { cache })
    const second = loadConfig({ ...dirs, env: {} }, documents("id: b\nname: B changed\ncriteria: {}\n"), { cache })
    if (!first.ok || !second.ok) throw new Error("the test config does not load")
    const byId = (load: typeof first, id: string) => load.config.targetGroups.find((group) => group.id === id)
    expect(byId(second, "a")).toBe(byId(first, "a"))
    expect(byId(second, "b")).not.toBe(byId(first, "b"))
    expect(byId(second, "b")?.name).toBe("B changed")
  })
})

describe("decodeYaml's bounds", () => {
  it("finds duplicate keys among 20,000 in one pass, and refuses files over 1 MiB", () => {
    const lines = ["id: big", "name: Big", "criteria: {}", "extra:"]
    for (let i = 0; i < 20_000; i++) lines.push(`  key${i}: [1, 2, 3]`)
    lines.push("  key7: again")
    const decoded = decodeYaml(TargetGroup, "big.yaml", `${lines.join("\n")}\n`)
    expect(decoded).toMatchObject({
      ok: false,
      problems: [{ path: "extra.key7", message: 'the key "key7" appears twice in the same mapping (first on line 12)' }]
    })
    expect(decodeYaml(TargetGroup, "huge.yaml", `id: x\nname: "${"x".repeat(MAX_YAML_BYTES)}"\n`)).toMatchObject({
      ok: false,
      problems: [{ message: `the file is larger than ${MAX_YAML_BYTES} bytes` }]
    })
  })
})

describe("the SMTP certificate authorities file", () => {
  it("is read with the config, and a missing one is a problem of campusgate.yaml, not a failed start", () => {
    const mail = (ca: string) =>
      `${settingsYaml}verification:\n  mail:\n    from: a@acme.example\n    smtp:\n      host: 127.0.0.1\n      port: 2525\n      ca: ${ca}\n`
    const missing = load({ ...validConfig, "campusgate.yaml": mail("nowhere.pem") })
    expect(problems(missing)).toEqual([
      'campusgate.yaml:11:11 verification.mail.smtp.ca: "nowhere.pem": no such file (paths are relative to the config directory)'
    ])
    const present = load({
      ...validConfig,
      "campusgate.yaml": mail("ca.pem"),
      "ca.pem": "-----BEGIN CERTIFICATE-----\n"
    })
    expect(present.ok && present.config.smtpCa).toBe("-----BEGIN CERTIFICATE-----\n")
  })
})
