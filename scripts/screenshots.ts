/**
 * `npm run screenshots`: the picture of the console in the README. Builds
 * the console into a directory of its own, starts a daemon on the sample
 * data of the console's browser test (`test/console/demo.ts`: two teams,
 * an offer with six weeks of history and today's validations), signs in
 * with Debian's chromium (playwright-core, `CAMPUSGATE_CHROMIUM` to use
 * another) and saves the offer page to `docs/console-offer.png`. Prints
 * what it wrote as one JSON line.
 */
import { mkdirSync, mkdtempSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { chromium } from "playwright-core"
import { DEMO_OFFER, startDemo } from "../test/console/demo.ts"
import { buildConsole } from "./build-console.ts"

const chromiumPath = process.env.CAMPUSGATE_CHROMIUM ?? "/usr/bin/chromium"
const target = fileURLToPath(new URL("../docs/console-offer.png", import.meta.url))

const consoleDir = mkdtempSync(join(tmpdir(), "campusgate-console-build-"))
await buildConsole(consoleDir)
const demo = await startDemo({ consoleDir })
const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), "campusgate-chromium-")), {
  executablePath: chromiumPath,
  headless: true,
  viewport: { width: 1200, height: 900 },
  colorScheme: "light",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
})
try {
  const page = context.pages()[0] ?? (await context.newPage())
  await page.goto(`${demo.daemon.url}/console`)
  await page.getByLabel("API key").fill(demo.acmeKey)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.getByRole("link", { name: DEMO_OFFER.name }).click()
  await page.locator(".uplot").waitFor()
  // Out of the picture: the pointer, and the focus ring of the heading a navigation focuses.
  await page.mouse.move(0, 0)
  await page.evaluate(() =>
    (globalThis as unknown as { document: { activeElement: { blur(): void } } }).document.activeElement.blur()
  )
  mkdirSync(join(target, ".."), { recursive: true })
  await page.screenshot({ path: target, fullPage: true })
  console.log(JSON.stringify({ wrote: "docs/console-offer.png", bytes: statSync(target).size }))
} finally {
  await context.close()
  await demo.daemon.stop()
}
