import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { zipSync } from "fflate"
import { describe, expect, it } from "vitest"
import { createCampusgate } from "../../src/library.ts"
import { rorV2 } from "../engine/institutions/sourceFixtures.ts"

const main = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url))
const campusgate = (args: Array<string>) =>
  execFileSync(process.execPath, [main, ...args], { encoding: "utf8" })
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line))

/** A swot checkout with the given domains (`[domain, name]`). */
const swotCheckout = (root: string, domains: ReadonlyArray<readonly [string, string]>): string => {
  const dir = join(root, `swot-${domains.length}`)
  const lib = join(dir, "lib", "domains")
  mkdirSync(lib, { recursive: true })
  writeFileSync(join(lib, "tlds.txt"), "ac.za\n")
  writeFileSync(join(lib, "stoplist.txt"), "")
  writeFileSync(join(lib, "abused.txt"), "")
  for (const [domain, name] of domains) {
    const labels = domain.split(".").reverse()
    mkdirSync(join(lib, ...labels.slice(0, -1)), { recursive: true })
    writeFileSync(join(lib, ...labels.slice(0, -1), `${labels.at(-1)}.txt`), `${name}\n`)
  }
  return dir
}

describe("campusgate data import and diff", () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-data-"))
  const config = join(root, "config")
  const data = join(root, "data")
  mkdirSync(config)
  writeFileSync(join(config, "campusgate.yaml"), "teams: [{ id: acme }]\n")
  const ror = [
    rorV2("0abc12345", "Newly Registered University", ["education"], {
      domains: ["newly-registered.org"],
      country: "PT"
    })
  ]
  const dump = join(root, "v9.9-2026-10-01-ror-data.zip")
  writeFileSync(dump, zipSync({ "v9.9-2026-10-01-ror-data.json": new TextEncoder().encode(JSON.stringify(ror)) }))

  it("compiles newer sources into the data directory, which the library then uses", async () => {
    const swot = swotCheckout(root, [["first-college.org", "First College of Examples"]])
    const [report] = campusgate([
      "data",
      "import",
      "--swot",
      swot,
      "--swot-version",
      "abc1234",
      "--swot-date",
      "2026-10-02",
      "--ror",
      dump,
      "--config",
      config,
      "--data",
      data
    ])
    expect(report.sources).toMatchObject([
      { dataset: "swot", version: "abc1234", date: "2026-10-02" },
      { dataset: "ror", version: "v9.9", date: "2026-10-01", licence: "CC0-1.0" }
    ])
    const cg = await createCampusgate({ configDir: config, dataDir: data })
    expect(cg.institutionOf("jane@newly-registered.org")).toMatchObject({
      institution: { name: "Newly Registered University", country: "PT", type: "university" },
      ror: "0abc12345"
    })
    expect(cg.inspect("first-college.org").institution).toMatchObject({ name: "First College of Examples" })
    await cg.close()
  })

  it("lists what another import adds, removes and changes", () => {
    copyFileSync(join(data, "institutions", "index.json"), join(root, "before.json"))
    // The ROR snapshot of the first import is kept; only swot changes.
    const swot = swotCheckout(root, [
      ["second-college.org", "Second College"],
      ["newly-registered.org", "Newly Registered University"]
    ])
    campusgate([
      "data",
      "import",
      "--swot",
      swot,
      "--swot-version",
      "def5678",
      "--swot-date",
      "2026-10-03",
      "--config",
      config,
      "--data",
      data
    ])
    const lines = campusgate(["data", "diff", "--from", join(root, "before.json"), "--config", config, "--data", data])
    expect(lines).toContainEqual(expect.objectContaining({ change: "added", domain: "second-college.org" }))
    expect(lines).toContainEqual(expect.objectContaining({ change: "removed", domain: "first-college.org" }))
    expect(lines.at(-1)).toMatchObject({ added: 1, removed: 1, changed: 0 })
  })
})
