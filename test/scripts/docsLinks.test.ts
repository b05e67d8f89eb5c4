/**
 * README.md and the pages in docs/ link to each other, to the repository's
 * files and to headings; this fails when a link points to a file that does
 * not exist or to a heading its page does not have (GitHub's anchors).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const repo = fileURLToPath(new URL("../..", import.meta.url))
const pages = [
  "README.md",
  ...readdirSync(join(repo, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`)
]

/** The text outside fenced code blocks and inline code. */
const prose = (markdown: string) =>
  markdown.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, (code) => code.replace(/[[\]()]/g, " "))

/** GitHub's anchor for each heading: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
const anchors = (markdown: string) => {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const [, text] of markdown.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} +(.+?) *#*$/gm)) {
    const base = text!
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-")
    const count = seen.get(base) ?? 0
    seen.set(base, count + 1)
    result.add(count === 0 ? base : `${base}-${count}`)
  }
  return result
}

const links = (page: string) =>
  [...prose(readFileSync(join(repo, page), "utf8")).matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)]
    .map((match) => match[1]!)
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target))

describe("links in README.md and docs/", () => {
  it("finds the pages and their links", () => {
    expect(pages).toContain("docs/http-api.md")
    expect(links("README.md")).toContain("docs/http-api.md")
  })

  for (const page of pages) {
    it(`${page}: every relative link names an existing file and heading`, () => {
      const broken: Array<string> = []
      for (const target of links(page)) {
        const [path, anchor] = target.split("#") as [string, string | undefined]
        const file = path === "" ? join(repo, page) : join(repo, dirname(page), decodeURIComponent(path))
        if (!existsSync(file)) {
          broken.push(`${target}: no file ${relative(repo, file)}`)
          continue
        }
        if (anchor !== undefined && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(anchor)) {
          broken.push(`${target}: no heading #${anchor} in ${relative(repo, file)}`)
        }
      }
      expect(broken).toEqual([])
    })
  }
})
