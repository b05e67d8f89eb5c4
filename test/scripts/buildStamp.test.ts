/**
 * `npm install` builds once: `prepare` asks `scripts/build-stamp.ts --check`
 * whether `dist/` was built from the sources as they are, and builds only
 * when it was not (a fresh clone, a changed source). A second install, a
 * `file:` dependency on a built checkout, or npx's copy of it, builds
 * nothing. Each outcome says so in one line.
 */
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const script = fileURLToPath(new URL("../../scripts/build-stamp.ts", import.meta.url))
const repo = fileURLToPath(new URL("../../", import.meta.url))

const run = (root: string, mode: "--check" | "--write") =>
  spawnSync(process.execPath, [script, mode, "--root", root], { encoding: "utf8" })

/** A checkout's inputs in miniature: a source file, a script, the package files, and a built dist/. */
const checkout = () => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-stamp-"))
  for (const dir of ["src", "scripts", "dist", "src/.cache"]) mkdirSync(join(root, dir), { recursive: true })
  writeFileSync(join(root, "src", "index.ts"), "export const answer = 42\n")
  writeFileSync(join(root, "scripts", "build-data.ts"), "// builds the data\n")
  writeFileSync(join(root, "package.json"), "{}\n")
  writeFileSync(join(root, "package-lock.json"), "{}\n")
  return root
}

describe("the build stamp", () => {
  it("asks for a build until one has run, then not while the sources stay as they were", () => {
    const root = checkout()
    const before = run(root, "--check")
    expect(before.status).toBe(1)
    expect(before.stderr).toMatch(/^campusgate: building dist\/ \(not built yet\)/)
    expect(run(root, "--write").status).toBe(0)
    const after = run(root, "--check")
    expect(after.status).toBe(0)
    expect(after.stderr).toMatch(/^campusgate: dist\/ is current .*not building again/)
  })

  it("asks again when a source, a build script or the lockfile changes, not for hidden files beside them", () => {
    const root = checkout()
    run(root, "--write")
    writeFileSync(join(root, "src", ".index.ts.swp"), "an editor's swap file")
    writeFileSync(join(root, "src", ".cache", "anything"), "a cache")
    expect(run(root, "--check").status).toBe(0)
    for (const file of ["src/index.ts", "scripts/build-data.ts", "package-lock.json"]) {
      const path = join(root, file)
      const original = readFileSync(path, "utf8")
      writeFileSync(path, `${original}\n`)
      const changed = run(root, "--check")
      expect(changed.status, file).toBe(1)
      expect(changed.stderr).toMatch(/the sources changed/)
      writeFileSync(path, original)
      expect(run(root, "--check").status, file).toBe(0)
    }
  })

  it("is what prepare runs before it builds, and the build's last step", () => {
    const scripts = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")).scripts
    expect(scripts.prepare).toBe("node scripts/build-stamp.ts --check || npm run build")
    expect(scripts.build).toMatch(/&& node scripts\/build-stamp\.ts --write$/)
  })
})
