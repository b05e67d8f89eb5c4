/**
 * README.md is the front page (issue 46): what Campusgate is, the two
 * commands, a short tour and links; everything else is in a page of docs/
 * for its reader, each opening with a table of contents.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const readme = readFileSync(join(repo, "README.md"), "utf8")
const pages = readdirSync(join(repo, "docs")).filter((name) => name.endsWith(".md") && name !== "email-policy.md")

describe("README.md", () => {
  it("stays under 300 lines", () => {
    expect(readme.split("\n").length).toBeLessThanOrEqual(300)
  })

  it("opens with the two commands, the second the one CI runs", () => {
    const first = /```sh\n([\s\S]*?)```/.exec(readme)?.[1]?.split("\n") ?? []
    expect(first[0]).toMatch(/^npm install && npm start -- --config config --data data +# /)
    expect(first[1]).toMatch(/^npm install && npm test +# /)
    expect(readFileSync(join(repo, ".ci/run"), "utf8")).toMatch(/^npm install && npm test$/m)
  })

  it("links every page of docs/", () => {
    for (const page of [...pages, "email-policy.md"]) expect(readme).toContain(`(docs/${page})`)
  })
})

describe.each(pages)("docs/%s", (page) => {
  const text = readFileSync(join(repo, "docs", page), "utf8")
  const [head = "", ...sections] = text.replace(/^```[\s\S]*?^```/gm, "").split(/^(?=## )/m)

  it("opens with a title, whom it is for and a table of contents naming each section", () => {
    expect(head).toMatch(/^# .+\n\nFor .+\n\n- \[/)
    for (const section of sections) {
      const title = section.slice(3, section.indexOf("\n"))
      expect(head, `no entry for "## ${title}"`).toContain(`- [${title}](#`)
    }
  })
})
