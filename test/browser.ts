/**
 * Debian's chromium for the browser tests (the docs page, its snippets, the
 * console), driven by playwright-core: where it is, whether the run must
 * have it (`CAMPUSGATE_REQUIRE_BROWSER=1`, as CI sets), a loud line when a
 * suite is skipped for want of it, a headless context with the flags
 * this machine's closed network needs, and an axe-core scan of a page.
 */
import { existsSync, mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import axe from "axe-core"
import { type BrowserContext, chromium, type Page } from "playwright-core"
import { expect } from "vitest"

// What the scan evaluates in the page (this file is type-checked without the DOM library).
declare const window: { readonly axe?: typeof axe }
declare const document: unknown

export const CHROMIUM = process.env.CAMPUSGATE_CHROMIUM ?? "/usr/bin/chromium"
export const browserRequired = process.env.CAMPUSGATE_REQUIRE_BROWSER === "1"
export const browserAvailable = existsSync(CHROMIUM)

/** Says loudly that `what` did not run (unless the browser is required, when the test fails instead). */
export const warnWithoutBrowser = (what: string): void => {
  if (browserAvailable || browserRequired) return
  console.warn(
    `\n${"!".repeat(78)}\n!! SKIPPED: ${what}: no chromium at ${CHROMIUM}.\n!! Install it (apt-get install chromium) or set CAMPUSGATE_CHROMIUM; CI runs it.\n${"!".repeat(78)}\n`
  )
}

/** A headless chromium with a profile of its own; nothing it asks of another host leaves this machine. */
export const launchBrowser = (
  options: Omit<NonNullable<Parameters<typeof chromium.launchPersistentContext>[1]>, "executablePath" | "args"> = {}
): Promise<BrowserContext> =>
  chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "campusgate-chromium-")), {
    headless: true,
    viewport: { width: 1400, height: 1000 },
    ...options,
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync"
    ]
  })

/** Runs axe-core on the page as it is and expects no violation of impact serious or critical. */
export const expectAccessible = async (page: Page, screen: string): Promise<void> => {
  // Evaluated through the DevTools protocol, which the page's CSP does not govern (a script tag would be refused).
  if (!(await page.evaluate(() => "axe" in window))) await page.evaluate(axe.source)
  const violations = await page.evaluate(async () => {
    const result = await window.axe!.run(document as never, { resultTypes: ["violations"] })
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      targets: violation.nodes.map((node) => node.target.join(" ")).slice(0, 5)
    }))
  })
  const grave = violations.filter((violation) => violation.impact === "serious" || violation.impact === "critical")
  expect(grave, `accessibility violations on ${screen}`).toEqual([])
}
