import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/config/loadConfig.ts"
import { renderMessage } from "../../src/verification/messages.ts"

const configWith = (files: Record<string, string>) => {
  const configDir = mkdtempSync(join(tmpdir(), "campusgate-templates-"))
  mkdirSync(join(configDir, "templates"))
  for (const [name, text] of Object.entries(files)) writeFileSync(join(configDir, "templates", name), text)
  return loadConfig({ configDir, env: {} })
}

describe("templates/<locale>.yaml", () => {
  it("overrides parts of a built-in locale; the rest stays built in", () => {
    const loaded = configWith({ "de.yaml": 'code:\n  subject: "Code für {{offer}}"\n' })
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems))
    const message = renderMessage("de", "code", loaded.config.templates, {
      offer: "Frühling <Rabatt>",
      institution: "TUM",
      minutes: "10",
      code: "123456"
    })
    expect(message.subject).toBe("Code für Frühling <Rabatt>")
    expect(message.text).toContain("123456")
    expect(message.html).toContain("Frühling &lt;Rabatt&gt;")
  })

  it("refuses unknown placeholders, a body without its code, anything an HTML body would load, and an incomplete new locale", () => {
    const loaded = configWith({
      "en.yaml": [
        "code:",
        '  subject: "Hi {{name}}"',
        '  text: "no code here"',
        '  html: "<p>{{code}}</p><img src=\\"https://t.example/p.gif\\">"'
      ].join("\n"),
      "it.yaml": 'code:\n  subject: "Il tuo codice"\n',
      "english.yaml": "code: {}\n"
    })
    expect(loaded.ok).toBe(false)
    const problems = loaded.ok ? [] : loaded.problems
    const at = (path: string) =>
      problems.filter((problem) => problem.path === path && problem.file?.endsWith("en.yaml"))
    expect(at("code.subject")[0]).toMatchObject({
      line: 2,
      message: expect.stringContaining("unknown placeholder {{name}}")
    })
    expect(at("code.text")[0]).toMatchObject({ line: 3, message: "a code message must contain {{code}}" })
    expect(at("code.html")[0]?.message).toContain("no tracking")
    expect(problems.some((problem) => problem.file?.endsWith("it.yaml") && problem.path === "link.html")).toBe(true)
    expect(problems.some((problem) => problem.file?.endsWith("english.yaml"))).toBe(true)
  })
})
