/**
 * The console as its browser tests drive it (`browser.test.ts`,
 * `reviews.browser.test.ts`): the console built from source into a
 * directory of the test's own, and one page of it in a headless chromium
 * that may load nothing from another host (what it asked for is refused and
 * kept), with the page's Content-Security-Policy complaints and uncaught
 * errors collected; an axe-core scan of the page as it is, a screenshot
 * into `test-artifacts/console/`, a screen's heading, and signing in with
 * a key.
 */
import { mkdirSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { BrowserContext, Locator, Page } from "playwright-core"
import { expect } from "vitest"
import { buildConsole } from "../../scripts/build-console.ts"
import { browserAvailable, CHROMIUM, expectAccessible, launchBrowser } from "../browser.ts"

const artifacts = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url))

/** Fails when the browser is required but missing; builds the console and answers its directory. */
export const buildConsoleForBrowser = async (): Promise<string> => {
  expect(browserAvailable, `CAMPUSGATE_REQUIRE_BROWSER=1 but there is no chromium at ${CHROMIUM}`).toBe(true)
  mkdirSync(artifacts, { recursive: true })
  const consoleDir = mkdtempSync(join(tmpdir(), "campusgate-console-build-"))
  await buildConsole(consoleDir)
  return consoleDir
}

export interface ConsoleBrowser {
  readonly context: BrowserContext
  readonly page: Page
  /** The addresses of other hosts the page asked for (each refused). */
  readonly outside: Array<string>
  /** The page's console messages about Content-Security-Policy violations. */
  readonly cspViolations: Array<string>
  /** The messages of the errors the page did not catch. */
  readonly pageErrors: Array<string>
  /** `path` on the daemon that serves the console. */
  readonly url: (path: string) => string
  /** Runs axe-core on the page as it is: no serious or critical violation. */
  readonly scan: (screen: string) => Promise<void>
  /** A full-page screenshot, `test-artifacts/console/<name>.png`. */
  readonly shot: (name: string) => Promise<Buffer>
  /** The screen's heading (level 1). */
  readonly heading: (name: string | RegExp) => Locator
  /** Signs in with `key` at the console's address and waits for the offers. */
  readonly signIn: (key: string) => Promise<void>
}

/** A headless chromium with one page, for the console the daemon at `baseUrl` serves. */
export const openConsoleBrowser = async (
  baseUrl: string,
  options: Parameters<typeof launchBrowser>[0] = {}
): Promise<ConsoleBrowser> => {
  const outside: Array<string> = []
  const cspViolations: Array<string> = []
  const pageErrors: Array<string> = []
  const context = await launchBrowser({ viewport: { width: 1280, height: 900 }, colorScheme: "light", ...options })
  await context.route("**/*", (route) => {
    const target = new URL(route.request().url())
    if (target.protocol === "data:" || target.protocol === "blob:" || target.hostname === "127.0.0.1")
      return route.continue()
    outside.push(target.href)
    return route.abort()
  })
  const page = context.pages()[0] ?? (await context.newPage())
  page.on("pageerror", (error) => pageErrors.push(error.message))
  page.on("console", (message) => {
    if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text())
  })

  const url = (path: string) => `${baseUrl}${path}`
  const heading = (name: string | RegExp) => page.getByRole("heading", { level: 1, name })
  return {
    context,
    page,
    outside,
    cspViolations,
    pageErrors,
    url,
    heading,
    scan: (screen) => expectAccessible(page, screen),
    shot: (name) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true }),
    signIn: async (key) => {
      await page.goto(url("/console"))
      await page.getByLabel("API key").fill(key)
      await page.getByRole("button", { name: "Sign in" }).click()
      await heading("Offers").waitFor()
    }
  }
}
