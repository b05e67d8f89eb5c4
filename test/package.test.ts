/**
 * What `npm pack` ships: the compiled code with its types and source maps
 * (each carrying its sources, since src/ is not shipped), the compiled
 * institution data and JSON Schemas, the preinstall check, the licence
 * files; no TypeScript sources, tests or config. Every runtime dependency
 * is one the code imports.
 */
import { execFileSync } from "node:child_process"
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const repo = fileURLToPath(new URL("../", import.meta.url))
const packageJson = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"))

const packed = (): { files: Array<string>; unpackedSize: number } => {
  const output = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: repo,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"]
  })
  const [pack] = JSON.parse(output) as Array<{ files: Array<{ path: string }>; unpackedSize: number }>
  return { files: pack!.files.map((file) => file.path), unpackedSize: pack!.unpackedSize }
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(".ts"))
    .map((name) => join(dir, name))

describe("the npm package", () => {
  const { files, unpackedSize } = packed()

  it("ships the docs page's script once, in its brotli form, and weighs under 34 MB unpacked", () => {
    // The plain bundle and a gzip form beside it made the docs 6.7 MB of a 29.5 MB package. The bound was 25 MB
    // until the OpenID Connect provider, every port's PostgreSQL adapter and the keys API (26.6 MB, 10.4 MB packed):
    // the data (13 MB) and the daemon's bundle (4.7 MB) are most of it. It was 28 MB until the index and the email
    // lists came in the binary forms a start reads without building anything (13.5 MB; their JSON, which only a
    // merge and the tools read, now gzipped: 2.6 MB): 32.9 MB, 15 MB packed.
    expect(files.filter((file) => file.startsWith("dist/docs/"))).toEqual(["dist/docs/scalar.js.br"])
    expect(unpackedSize).toBeLessThan(34 * 1024 * 1024)
  })

  it("ships the code, its types, the compiled data, the schemas, the preinstall check and the licence", () => {
    for (const file of [
      "package.json",
      "README.md",
      "LICENSE",
      "scripts/check-node.cjs",
      "dist/index.js",
      "dist/index.d.ts",
      "dist/cli/bin.js",
      "dist/daemon/campusgate.js",
      "dist/daemon/jobThread.js",
      "dist/daemon/loadConfigWorker.js",
      "dist/daemon/mailThread.js",
      "dist/api/client.js",
      "dist/data/institutions.bin",
      "dist/data/institutions.json.gz",
      "dist/data/email-lists.bin",
      "dist/data/email-lists.json.gz",
      "dist/schemas/target-group.schema.json"
    ]) {
      expect(files).toContain(file)
    }
    if (existsSync(join(repo, "NOTICE"))) expect(files).toContain("NOTICE")
    expect(files.filter((file) => file.endsWith(".ts") && !file.endsWith(".d.ts"))).toEqual([])
    expect(files.filter((file) => /^(src|test|config|bench|examples)\//.test(file))).toEqual([])
  })

  it("carries each source map's sources, since the TypeScript files are not shipped", () => {
    const maps = files.filter((file) => file.endsWith(".js.map"))
    expect(maps.length).toBeGreaterThan(50)
    for (const map of maps) {
      const { sources, sourcesContent } = JSON.parse(readFileSync(join(repo, map), "utf8"))
      expect(sourcesContent, map).toHaveLength(sources.length)
      expect(sourcesContent.every((content: unknown) => typeof content === "string" && content.length > 0)).toBe(true)
    }
  })

  it("depends only on packages the code imports", () => {
    const code = sourceFiles(join(repo, "src"))
      .map((file) => readFileSync(file, "utf8"))
      .join("\n")
    for (const dependency of Object.keys(packageJson.dependencies)) {
      // Imported statically, or on first use (`import("nodemailer")`).
      const name = dependency.replace("/", "\\/")
      expect(code, dependency).toMatch(new RegExp(`(from |import\\()"${name}(/[^"]*)?"`))
    }
  })
})
