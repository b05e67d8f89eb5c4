/** Temporary config and data directories written from `{ "relative/path.yaml": "content" }` maps. */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"

export type Files = Readonly<Record<string, string>>

/** The text of every file under `dir`, e.g. to check a secret was never written anywhere. */
export const allText = (dir: string): string =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, "utf8"))
    .join("\n")

export const writeFiles = (root: string, files: Files): void => {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
}

/** A fresh `<tmp>/config` and `<tmp>/data` with the given files. */
export const makeDirs = (config: Files, data: Files = {}): { root: string; configDir: string; dataDir: string } => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-config-"))
  const configDir = join(root, "config")
  const dataDir = join(root, "data")
  mkdirSync(configDir)
  writeFiles(configDir, config)
  writeFiles(dataDir, data)
  return { root, configDir, dataDir }
}

export const settingsYaml = `teams:
  - id: acme
    name: Acme
  - id: globex
`

export const ukGroupYaml = `id: uk
name: UK students
criteria:
  institutions:
    countries: [GB]
examples:
  valid: [jane@ox.ac.uk]
  invalid: [bob@mit.edu]
`

export const offerYaml = `id: spring
team: acme
name: Spring sale
status: active
targetGroups:
  - uk
`

/** A small valid config: one shared target group, one offer. */
export const validConfig: Files = {
  "campusgate.yaml": settingsYaml,
  "target-groups/uk.yaml": ukGroupYaml,
  "offers/spring.yaml": offerYaml
}
