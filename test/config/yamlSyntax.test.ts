import { describe, expect, it } from "vitest"
import { decodeYaml } from "../../src/config/yamlDecode.ts"
import { TargetGroup } from "../../src/domain/TargetGroup.ts"

/** The one problem of a file, as `file:line:col message`. */
const problemOf = (text: string): string => {
  const decoded = decodeYaml(TargetGroup, "tg.yaml", text)
  if (decoded.ok) throw new Error("expected a problem")
  expect(decoded.problems).toHaveLength(1)
  const [problem] = decoded.problems
  return `${problem!.line}:${problem!.column} ${problem!.message}`
}

describe("YAML syntax errors in plain words", () => {
  it("names the mistake and its fix, never the parser's grammar", () => {
    expect(problemOf("id: x\ncriteria:\n\tdomains: {}\n")).toBe(
      "3:1 a tab is used to indent: YAML indents with spaces only"
    )
    expect(problemOf("id: x\nname Foo\ncriteria: {}\n")).toMatch(
      /^2:1 a line that is neither "key: value" nor a list item: is the colon after the key missing/
    )
    expect(problemOf("id: x\nname: Foo: bar\ncriteria: {}\n")).toMatch(
      /^2:7 a value holds ": " \(a colon and a space\), which starts another key: put the value in quotes/
    )
    expect(problemOf("id: x\ncriteria:\n  domains:\n    allow: [a.org]\n   deny: [b.org]\n")).toBe(
      "5:1 this key is not lined up with the keys above it: every key of a mapping starts in the same column"
    )
    expect(problemOf("id: x\nname: y\ncriteria:\n  domains:\n    allow: - a.org\n")).toMatch(
      /^5:12 a list cannot start on the same line as its key/
    )
  })

  it("points an unclosed quote or bracket at where it opens, not where the parser gave up", () => {
    expect(problemOf('id: x\nname: "Foo\ncriteria: {}\n')).toBe(
      '2:7 the double-quoted value that starts here is not closed: add the closing "'
    )
    expect(problemOf("id: x\ncriteria:\n  domains:\n    allow: [a.org, b.org\nname: y\n")).toBe(
      '4:12 the list in brackets that starts here is not closed: add the "]" that ends it'
    )
  })

  it("reports the first error of a file and counts the echoes after it", () => {
    expect(problemOf("teams;\n  - id: acme\n    name: Acme\n")).toMatch(
      /^1:1 .* \(fix this first: the parser reports \d+ more errors? after it, which may follow from it\)$/
    )
  })

  it("explains an alias that names no anchor, where the alias is", () => {
    expect(problemOf("id: x\nname: y\ncriteria:\n  domains:\n    allow: *partners\n")).toBe(
      "5:12 the alias *partners names no anchor (&partners) defined before it"
    )
  })
})
