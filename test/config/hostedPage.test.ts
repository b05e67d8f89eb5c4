/**
 * The hosted verification page's settings as the config loader reads them:
 * `verification.page` of an offer (and of the deployment), its logo read
 * from the config directory and checked, and the page's words in
 * `templates/<locale>.yaml` — each mistake reported with file, line and
 * path like any other, and a valid one chosen as the page asks.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { loadConfig } from "../../src/config/loadConfig.ts"
import { MAX_LOGO_BYTES } from "../../src/config/pageLogos.ts"
import { chooseLocale, pageLocales, wordsOf } from "../../src/server/hosted/hostedWords.ts"

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0])

const configWith = (page: string, files: Record<string, string | Buffer> = {}) => {
  const configDir = mkdtempSync(join(tmpdir(), "campusgate-page-"))
  for (const directory of ["offers", "target-groups", "templates"]) mkdirSync(join(configDir, directory))
  writeFileSync(join(configDir, "campusgate.yaml"), "teams:\n  - id: acme\n")
  writeFileSync(
    join(configDir, "target-groups", "unis.yaml"),
    "id: unis\nname: Universities\ncriteria:\n  institutions:\n    types: [university]\n"
  )
  writeFileSync(
    join(configDir, "offers", "deal.yaml"),
    `id: deal\nteam: acme\nname: Deal\ntargetGroups: [unis]\nstatus: active\nverification:\n  page:\n${page}`
  )
  for (const [name, content] of Object.entries(files)) writeFileSync(join(configDir, name), content)
  return loadConfig({ configDir, env: {} })
}

const problemsOf = (loaded: ReturnType<typeof loadConfig>) => (loaded.ok ? [] : loaded.problems)

describe("verification.page", () => {
  it("decodes a complete presentation; a logo file that is not there is a problem at its field", () => {
    const loaded = configWith(
      '    displayName: Acme\n    logo: brand/logo.png\n    accentColor: "#0a7c5a"\n    supportUrl: mailto:help@acme.example\n    privacyUrl: https://acme.example/privacy\n    privacyNotice: We keep nothing.\n',
      {}
    )
    // The logo's folder does not exist yet: a problem at the field.
    expect(problemsOf(loaded)).toEqual([
      expect.objectContaining({
        path: "verification.page.logo",
        line: 9,
        message: expect.stringContaining("no such file")
      })
    ])
  })

  it("accepts a logo in the config directory and keeps its bytes and type", () => {
    const loaded = configWith('    logo: logo.png\n    accentColor: "#abc"\n', { "logo.png": PNG })
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems))
    expect(loaded.config.offers[0]!.verification?.page).toEqual({ logo: "logo.png", accentColor: "#abc" })
    expect(loaded.config.pageLogos?.get("logo.png")).toEqual({ contentType: "image/png", bytes: new Uint8Array(PNG) })
  })

  it("reports each bad field with its position", () => {
    const loaded = configWith(
      '    displayName: ""\n    logo: ../outside.png\n    accentColor: red\n    supportUrl: http://acme.example/help\n    surprise: 1\n'
    )
    const problems = problemsOf(loaded)
    const at = (path: string) => problems.find((problem) => problem.path === path)
    expect(at("verification.page.displayName")).toMatchObject({ line: 8, message: "1 to 100 characters" })
    expect(at("verification.page.logo")).toMatchObject({ line: 9, message: expect.stringContaining("without ..") })
    expect(at("verification.page.accentColor")).toMatchObject({ line: 10, message: "a colour such as #1d4ed8" })
    expect(at("verification.page.supportUrl")?.message).toContain("https or mailto:")
    expect(problems.some((problem) => problem.path.includes("surprise"))).toBe(true)
  })

  it("refuses a logo that is too large, of another type than its name, or not an image type", () => {
    const big = configWith("    logo: big.png\n", { "big.png": Buffer.concat([PNG, Buffer.alloc(MAX_LOGO_BYTES)]) })
    expect(problemsOf(big)[0]?.message).toContain("at most 256 KB")
    const lying = configWith("    logo: fake.svg\n", { "fake.svg": PNG })
    expect(problemsOf(lying)[0]?.message).toContain("not the image/svg+xml its name says")
    const gif = configWith("    logo: anim.gif\n", { "anim.gif": "GIF89a" })
    expect(problemsOf(gif)[0]?.message).toContain(".png, .svg, .jpg, .jpeg or .webp")
  })
})

describe("the page's words in templates/<locale>.yaml", () => {
  it("overrides words of a built-in language and adds a language given whole; a partial new one is refused", () => {
    const words = (locale: string) =>
      `page:\n${Object.keys(wordsOf("en", new Map()))
        .map((key) => `  ${key}: "${locale} ${key}"`)
        .join("\n")}\n`
    const loaded = configWith("    displayName: Acme\n", {
      "templates/de.yaml": 'page:\n  submit: "Los"\n',
      "templates/nl.yaml": `${words("nl")}code:\n  subject: s\n  text: "{{code}}"\n  html: "{{code}}"\nlink:\n  subject: s\n  text: "{{link}}"\n  html: "{{link}}"\n`
    })
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.problems))
    const { templates } = loaded.config
    expect(pageLocales(templates)).toEqual(["en", "de", "fr", "es", "nl"])
    expect(wordsOf("de", templates).submit).toBe("Los")
    expect(wordsOf("de", templates).confirm).toBe("Bestätigen")
    expect(wordsOf("nl", templates).heading).toBe("nl heading")
    expect(chooseLocale(pageLocales(templates), undefined, "nl-BE, en;q=0.5", "en")).toBe("nl")

    const partial = configWith("    displayName: Acme\n", {
      "templates/pt.yaml": `page:\n  submit: "Continuar"\ncode:\n  subject: s\n  text: "{{code}}"\n  html: "{{code}}"\nlink:\n  subject: s\n  text: "{{link}}"\n  html: "{{link}}"\n`
    })
    expect(problemsOf(partial)).toEqual([
      expect.objectContaining({ path: "page", line: 2, message: expect.stringContaining("missing: heading, intro") })
    ])
  })

  it("chooses ?locale=, then Accept-Language by quality, then the offer's locale, else English", () => {
    const available = ["en", "de", "fr", "es"]
    expect(chooseLocale(available, "fr-CA", "de", "es")).toBe("fr")
    expect(chooseLocale(available, "xx", "it, de;q=0.4, es;q=0.8", "en")).toBe("es")
    expect(chooseLocale(available, undefined, "de;q=0, fr;q=0.1", "en")).toBe("fr")
    expect(chooseLocale(available, undefined, "ja", "de")).toBe("de")
    expect(chooseLocale(available, undefined, undefined, "pt")).toBe("en")
  })
})
