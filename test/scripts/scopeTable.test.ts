/**
 * The scope table in docs/http-api.md is generated from the contract's `RequiredScope`
 * annotations by `scripts/scope-table.ts`; this keeps the two in step.
 */
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const script = fileURLToPath(new URL("../../scripts/scope-table.ts", import.meta.url))
const page = readFileSync(new URL("../../docs/http-api.md", import.meta.url), "utf8")

describe("the scope table in docs/http-api.md", () => {
  it("lists every endpoint with the scope the contract requires (regenerate: node scripts/scope-table.ts --write)", () => {
    const generated = execFileSync(process.execPath, [script], { encoding: "utf8" }).trim()
    const block = /<!-- scope-table:start[^\n]*-->\n([\s\S]*?)\n<!-- scope-table:end -->/.exec(page)
    expect(block, "docs/http-api.md has no scope-table block").not.toBeNull()
    expect(block![1]).toBe(generated)
    expect(generated).toMatch(/\| POST +\| `\/api\/v1\/validate\/target-group` +\| `validate:target-groups` +\|/)
  })
})
