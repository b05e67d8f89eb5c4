import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const script = fileURLToPath(new URL("../../scripts/check-node.cjs", import.meta.url))
const { problem } = createRequire(import.meta.url)(script) as {
  problem: (version: string, range: string) => string | undefined
}
const packageJson = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"))

describe("the preinstall Node.js check", () => {
  const range = packageJson.engines.node as string

  it("stops an older Node.js with one line naming the version needed", () => {
    expect(range).toBe(">=22.19")
    expect(problem("v20.20.2", range)).toBe(
      "campusgate needs Node.js 22.19 or newer (24 recommended, see .nvmrc); this is Node.js 20.20.2."
    )
    expect(problem("22.18.9", range)).toMatch(/^campusgate needs Node\.js 22\.19 or newer/)
    expect(problem("v0.10.48", range)).toMatch(/this is Node\.js 0\.10\.48\.$/)
  })

  it("lets the required version and newer ones through", () => {
    for (const version of ["v22.19.0", "22.20.1", "v23.0.0", "v24.21.0", "v30.1.2"]) {
      expect(problem(version, range)).toBeUndefined()
    }
  })

  it("runs as the package's preinstall script and passes on this Node.js", () => {
    // npm stops before installing anything where it reads devEngines; the preinstall covers the npm that does not.
    expect(packageJson.devEngines.runtime).toEqual({ name: "node", version: range, onFail: "error" })
    expect(packageJson.scripts.preinstall).toBe("node scripts/check-node.cjs")
    expect(packageJson.files).toContain("scripts/check-node.cjs")
    const run = spawnSync(process.execPath, [script], { encoding: "utf8" })
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" })
  })

  it("is written in JavaScript old Node.js parses: no arrow functions, let, const or template strings", () => {
    const code = readFileSync(script, "utf8").replace(/\/\*[\s\S]*?\*\//g, "")
    expect(code).not.toMatch(/=>|\blet\b|\bconst\b|`/)
  })
})
