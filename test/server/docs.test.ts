/**
 * The docs as a browser gets them. Over HTTP: `/` redirects to `/docs`,
 * every asset is compressed (br, gzip), carries an ETag and answers 304 to
 * a matching If-None-Match, the script is cached for good under its hashed
 * URL. In a real headless browser (Debian's chromium driven by
 * playwright-core): the page renders the reference from this daemon alone
 * (any request to another host is blocked and fails the test), the bearer
 * scheme is selected, the generated curl snippets send `Authorization:
 * Bearer`, no cloud button shows, and a screenshot is saved to
 * `artifacts/docs.png`. Without chromium the browser test is skipped with
 * a loud warning, unless CAMPUSGATE_REQUIRE_BROWSER=1 (CI) makes it fail.
 */
import { mkdirSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { browserAvailable, browserRequired, CHROMIUM, launchBrowser, warnWithoutBrowser } from "../browser.ts"
import { sharedDaemon } from "./daemon.ts"

const artifacts = fileURLToPath(new URL("../../artifacts/", import.meta.url))

warnWithoutBrowser("the docs page's browser test")

const daemon = sharedDaemon()

const get = (path: string, headers: Record<string, string> = {}) =>
  fetch(`${daemon.url}${path}`, { headers, redirect: "manual" })

describe("the docs over HTTP", () => {
  it("redirects / to /docs", async () => {
    const root = await get("/")
    expect(root.status).toBe(302)
    expect(root.headers.get("location")).toBe("/docs")
  })

  it("serves the page and its script from this daemon, compressed, cacheable and revalidated", async () => {
    const page = await get("/docs", { "accept-encoding": "gzip, br" })
    expect(page.status).toBe(200)
    expect(page.headers.get("content-encoding")).toBe("br")
    expect(page.headers.get("vary")).toBe("accept-encoding")
    expect(page.headers.get("cache-control")).toBe("no-cache")
    // A strict policy: scripts from here (the inline one by its hash), requests here, never in a frame.
    const policy = page.headers.get("content-security-policy") ?? ""
    expect(policy).toMatch(/frame-ancestors 'none'/)
    expect(policy).toMatch(/script-src 'self' 'sha256-[\w+/=]+'(;|$)/)
    expect(policy).toMatch(/default-src 'none'/)
    expect(page.headers.get("x-frame-options")).toBe("DENY")
    const html = await page.text()
    expect(html).not.toMatch(/https?:\/\//)
    const script = html.match(/src="(\/docs\/scalar\.js\?v=[\w-]+)"/)?.[1]
    expect(script).toBeDefined()
    const again = await get("/docs", { "accept-encoding": "gzip, br", "if-none-match": page.headers.get("etag")! })
    expect(again.status).toBe(304)

    const bundle = await get(script!, { "accept-encoding": "gzip" })
    expect(bundle.headers.get("content-encoding")).toBe("gzip")
    expect(bundle.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(bundle.headers.get("content-type")).toMatch(/^text\/javascript/)
    // fetch decodes what it is sent.
    expect(await bundle.text()).toMatch(/createApiReference/)
    const gzipBytes = Number(bundle.headers.get("content-length"))
    const brotli = await get(script!, { "accept-encoding": "br;q=1, gzip;q=0.5" })
    expect(brotli.headers.get("content-encoding")).toBe("br")
    expect(Number(brotli.headers.get("content-length"))).toBeLessThan(gzipBytes)
    // No encoding accepted: the identity, and its own ETag.
    const plain = await get(script!, { "accept-encoding": "identity" })
    expect(plain.headers.get("content-encoding")).toBeNull()
    expect(plain.headers.get("etag")).not.toBe(bundle.headers.get("etag"))
    // Under another URL than the page names it is revalidated rather than cached for good.
    expect((await get("/docs/scalar.js")).headers.get("cache-control")).toBe("no-cache")
  })

  it("serves the OpenAPI document compressed with an ETag", async () => {
    const document = await get("/openapi.json", { "accept-encoding": "gzip" })
    expect(document.headers.get("content-encoding")).toBe("gzip")
    const spec = (await document.json()) as { components: { securitySchemes: { bearer: { scheme: string } } } }
    expect(spec.components.securitySchemes.bearer.scheme).toBe("bearer")
    const again = await get("/openapi.json", {
      "accept-encoding": "gzip",
      "if-none-match": document.headers.get("etag")!
    })
    expect(again.status).toBe(304)
  })
})

describe.skipIf(!browserAvailable && !browserRequired)("the docs page in a real headless browser", () => {
  it("renders from this daemon alone, with bearer auth selected and curl snippets that send Bearer", async () => {
    expect(browserAvailable, `CAMPUSGATE_REQUIRE_BROWSER=1 but there is no chromium at ${CHROMIUM}`).toBe(true)
    const context = await launchBrowser()
    try {
      const requests: Array<string> = []
      const outside: Array<string> = []
      let bytesOnTheWire = 0
      await context.route("**/*", (route) => {
        const url = new URL(route.request().url())
        requests.push(url.href)
        if (url.protocol === "data:" || url.hostname === "127.0.0.1") return route.continue()
        outside.push(url.href)
        return route.abort()
      })
      const page = await context.newPage()
      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      // What the Content Security Policy refused (the page must need nothing it refuses).
      page.on("console", (message) => {
        if (message.type() === "error" && /Content Security Policy/.test(message.text())) errors.push(message.text())
      })
      page.on("response", async (response) => {
        bytesOnTheWire += Number((await response.allHeaders())["content-length"] ?? 0)
      })
      await page.goto(`${daemon.url}/`, { waitUntil: "networkidle" })
      expect(new URL(page.url()).pathname).toBe("/docs")
      await page.getByText("Selected Auth Type: bearer").waitFor({ timeout: 30_000 })
      await page.locator("pre, code", { hasText: "curl" }).first().waitFor({ timeout: 30_000 })
      const snippets = await page
        .locator("pre, code", { hasText: "curl" })
        .evaluateAll((elements) => elements.map((element) => element.textContent ?? ""))
      expect(snippets.length).toBeGreaterThan(0)
      for (const snippet of snippets) {
        expect(snippet).toContain(`curl ${daemon.url}/api/v1/`)
        expect(snippet).toMatch(/--header 'Authorization: Bearer /)
        expect(snippet).not.toMatch(/Basic/)
      }
      const text = (await page.textContent("body")) ?? ""
      for (const cloud of ["Share", "Generate SDK", "Ask AI", "Generate MCP", "Register"])
        expect(text).not.toContain(cloud)
      expect(text).not.toContain("No authentication selected")
      expect(errors).toEqual([])
      expect(outside, "requests that left this machine").toEqual([])
      expect(requests.some((url) => url.includes("/docs/scalar.js?v="))).toBe(true)
      expect(requests.some((url) => url.endsWith("/openapi.json"))).toBe(true)
      mkdirSync(artifacts, { recursive: true })
      await page.screenshot({ path: join(artifacts, "docs.png") })
      console.log(`docs page: ${requests.length} requests, ${bytesOnTheWire} bytes on the wire (compressed)`)
      expect(bytesOnTheWire).toBeLessThan(1_500_000)
    } finally {
      await context.close()
    }
  }, 120_000)
})
