import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { makeDirs, settingsYaml, ukGroupYaml, validConfig } from "../config/configFiles.ts"

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))
const check = (args: Array<string>, cwd?: string) => {
  const run = spawnSync(process.execPath, [main, "check", ...args], {
    encoding: "utf8",
    cwd,
    env: { ...process.env, CAMPUSGATE_CONFIG: "" }
  })
  return { code: run.status, out: run.stdout.trim(), err: run.stderr.trim() }
}

describe("campusgate check", () => {
  it("passes a valid config, running the examples through the engine", () => {
    const { configDir, dataDir } = makeDirs(validConfig)
    const result = check([configDir, "--data", dataDir])
    expect(result).toMatchObject({ code: 0 })
    expect(result.out).toBe("ok: 1 target group, 1 offer, 0 API keys; 2 examples as expected")
  })

  it("fails with positions for every problem and exits non-zero", () => {
    const { root } = makeDirs({ ...validConfig, "target-groups/uk.yaml": ukGroupYaml.replace("[GB]", "[GB, UK]") })
    const result = check(["config", "--data", "data"], root)
    expect(result.code).toBe(1)
    expect(result.out.split("\n")).toEqual([
      'config/target-groups/uk.yaml:5:21 criteria.institutions.countries[1]: "UK" is not an ISO 3166-1 alpha-2 code (did you mean "GB"?)',
      "failed: 1 problem in config"
    ])
  })

  it("reports an example the engine decides otherwise, with the engine's explanation", () => {
    const { root } = makeDirs({
      ...validConfig,
      "target-groups/uk.yaml": ukGroupYaml.replace("valid: [jane@ox.ac.uk]", "valid: [jane@ox.ac.uk, bob@mit.edu]")
    })
    const result = check(["--config", "config", "--data", "data"], root)
    expect(result.code).toBe(1)
    expect(result.out).toContain(
      'config/target-groups/uk.yaml:7:26 examples.valid[1]: "bob@mit.edu" should be valid but is not: Massachusetts Institute of Technology is in US; this target group accepts GB. (COUNTRY_NOT_ALLOWED)'
    )
  })

  it("writes GitHub annotations and JSON for machines", () => {
    const { root } = makeDirs({
      ...validConfig,
      "offers/spring.yaml": "id: spring\nteam: acme\nname: S\nstatus: active\ntargetGroups: [nope]\n"
    })
    const github = check(["config", "--data", "data", "--format", "github"], root)
    expect(github.code).toBe(1)
    expect(github.out).toBe(
      '::error file=config/offers/spring.yaml,line=5,col=16,title=campusgate check::targetGroups[0]: no target group "nope" (known: uk)'
    )
    const json = JSON.parse(check(["config", "--data", "data", "--format", "json"], root).out)
    expect(json).toMatchObject({
      ok: false,
      problems: [{ file: "config/offers/spring.yaml", line: 5, path: "targetGroups[0]" }]
    })
  })

  it("reports every problem of every file at once, with suggestions, in each format", () => {
    const { root } = makeDirs({
      ...validConfig,
      "campusgate.yaml": `${settingsYaml}logging:\n  logEmail: true\n`,
      "target-groups/bad.yaml": 'id: bad\nname: "unclosed\n',
      "offers/spring.yaml": "id: spring\nteam: acme\nname: S\nstatus: activ\ntargetGroups: [ukk]\n"
    })
    const human = check(["config", "--data", "data"], root)
    expect(human.code).toBe(1)
    expect(human.out.split("\n")).toEqual([
      'config/campusgate.yaml:6:3 logging.logEmail: unknown key "logEmail" (did you mean "logEmails"?)',
      'config/target-groups/bad.yaml:2:7 (file): the double-quoted value that starts here is not closed: add the closing "',
      'config/offers/spring.yaml:4:9 status: expected one of "draft", "active", "paused", "archived", got "activ" (did you mean "active"?)',
      'config/offers/spring.yaml:5:16 targetGroups[0]: no target group "ukk" (did you mean "uk"?)',
      "failed: 4 problems in config"
    ])
    const json = JSON.parse(check(["config", "--data", "data", "--format", "json"], root).out)
    expect(json.ok).toBe(false)
    expect(json.problems.map((problem: { file: string; line: number }) => `${problem.file}:${problem.line}`)).toEqual([
      "config/campusgate.yaml:6",
      "config/target-groups/bad.yaml:2",
      "config/offers/spring.yaml:4",
      "config/offers/spring.yaml:5"
    ])
    const github = check(["config", "--data", "data", "--format", "github"], root)
    expect(github.out.split("\n")).toHaveLength(4)
    expect(github.out).toContain(
      '::error file=config/offers/spring.yaml,line=4,col=9,title=campusgate check::status: expected one of "draft", "active", "paused", "archived", got "activ" (did you mean "active"?)'
    )
  })

  it("rejects a bad flag with a clear message", () => {
    const result = check(["--format", "xml"])
    expect(result.code).not.toBe(0)
    expect(`${result.out}\n${result.err}`).toMatch(/format/)
  })
})
