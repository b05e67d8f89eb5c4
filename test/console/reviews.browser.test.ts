/**
 * The console's Reviews screen end to end, in a real headless browser
 * (Debian's chromium, playwright-core) against a real daemon: the shipped
 * example config plus a target group of acme's for colleges and
 * universities in Germany. Addresses at a domain no source lists are
 * validated through the API, so it enters the team's review queue (which
 * the daemon writes out every second: the test waits for it); a second
 * unknown domain is in the queue from the start (written before the
 * daemon starts, as the demo's are), so the screens are tested even while
 * the first cannot be. A key without `institutions:review` sees no
 * Reviews screen; one with it opens the queue in the order asked, reads a
 * domain's evidence, is shown the API's field messages beside the fields
 * of a refused approval and rejection, rejects the second domain with a
 * reason, approves the first as a college in Germany (after which the API
 * validates an address there), and finds both in their tabs and in the
 * audit trail with its key's id. Every screen is scanned by axe-core and
 * photographed into `test-artifacts/console/`; nothing may load from
 * another host, and the page may cause no CSP violation and throw no
 * error. Without chromium the test is skipped loudly, unless
 * CAMPUSGATE_REQUIRE_BROWSER=1 (CI).
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import type { BrowserContext, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { signalLines } from "../../console/src/data/reviews.ts"
import { buildConsole } from "../../scripts/build-console.ts"
import { createApiKey } from "../../src/app/Keys.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import {
  browserAvailable,
  browserRequired,
  CHROMIUM,
  expectAccessible,
  launchBrowser,
  warnWithoutBrowser
} from "../browser.ts"
import { call, copyConfig, type Daemon, makeKey, startDaemon } from "../server/daemon.ts"
import { writeReviewQueue } from "./demo.ts"

// What the callbacks evaluated in the page use of its globals (this file is type-checked without the DOM library).
declare const window: { readonly innerWidth: number }
declare const document: { readonly documentElement: { readonly scrollWidth: number } }

const artifacts = fileURLToPath(new URL("../../test-artifacts/console/", import.meta.url))

warnWithoutBrowser("the console's Reviews browser test")

/** A target group of acme's that an approved German college meets. */
const GROUP = {
  id: "acme-german-colleges",
  name: "Colleges and universities in Germany"
}
const GROUP_YAML = `id: ${GROUP.id}
name: ${GROUP.name}
team: acme
criteria:
  institutions:
    types: [university, college]
    countries: [DE]
`

/** Domains no source lists (neither ROR, swot nor the non-institutions list): one met through the API, one in the queue from the start. */
const APPROVED = "musikhochschule-nordheim.de"
const REJECTED = "cheap-degrees-online.com"
const APPROVED_NAME = "Musikhochschule Nordheim"
const REJECT_REASON = "Sells degrees; not an institution."

describe.skipIf(!browserAvailable && !browserRequired)(
  "the console's Reviews screen in a real headless browser",
  () => {
    let daemon: Daemon
    let reviewer: { key: string; id: string }
    let plainKey: string
    let context: BrowserContext
    let page: Page
    const outside: Array<string> = []
    const cspViolations: Array<string> = []
    const pageErrors: Array<string> = []
    /** Whether the domain met through the API reached the queue (the tests that approve it need it). */
    let queueReady = false

    const url = (path: string) => `${daemon.url}${path}`
    const api = (method: string, path: string, body?: unknown) =>
      call(daemon, method, path, { key: reviewer.key, ...(body === undefined ? {} : { body }) })
    const validate = (email: string) =>
      api("POST", "/api/v1/validate/target-group", { email, targetGroupId: GROUP.id }).then((answer) => {
        expect(answer.status, JSON.stringify(answer.body)).toBe(200)
        return answer.body as { isValid: boolean; reasonCode?: string }
      })

    /** Runs axe-core on the page as it is: no serious or critical violation. */
    const scan = (screen: string) => expectAccessible(page, screen)

    const shot = (name: string) => page.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true })
    const heading = (name: string | RegExp) => page.getByRole("heading", { level: 1, name })

    const signIn = async (key: string) => {
      await page.goto(url("/console"))
      await page.getByLabel("API key").fill(key)
      await page.getByRole("button", { name: "Sign in" }).click()
      await heading("Offers").waitFor()
    }

    const signOut = async () => {
      await page.getByRole("button", { name: "Sign out" }).click()
      await page.getByLabel("API key").waitFor()
    }

    /** The domains of the queue's tab as the API answers them. */
    const queued = async (status: "pending" | "approved" | "rejected", sort = "count") => {
      const answer = await api("GET", `/api/v1/institution-reviews?status=${status}&sort=${sort}`)
      expect(answer.status, JSON.stringify(answer.body)).toBe(200)
      return (answer.body.data as Array<{ domain: string }>).map((review) => review.domain)
    }

    const rows = () =>
      page.locator("tr[data-review]").evaluateAll((found) => found.map((row) => row.getAttribute("data-review")))

    beforeAll(async () => {
      expect(browserAvailable, `CAMPUSGATE_REQUIRE_BROWSER=1 but there is no chromium at ${CHROMIUM}`).toBe(true)
      mkdirSync(artifacts, { recursive: true })
      const consoleDir = mkdtempSync(join(tmpdir(), "campusgate-console-build-"))
      await buildConsole(consoleDir)
      const dirs = copyConfig()
      writeFileSync(join(dirs.configDir, "target-groups", `${GROUP.id}.yaml`), GROUP_YAML)
      const created = createApiKey({
        ...dirs,
        team: "acme" as TeamId,
        scopes: ["institutions:review", "validate:target-groups", "target-groups:read", "offers:read"],
        name: "reviewer"
      })
      reviewer = { key: created.key, id: created.id }
      plainKey = makeKey(dirs, "acme", ["validate:target-groups", "target-groups:read", "offers:read"])
      await writeReviewQueue(
        dirs.dataDir,
        "acme",
        [
          {
            domain: REJECTED,
            days: [
              [5, 1],
              [1, 2]
            ]
          }
        ],
        Date.now()
      )
      daemon = await startDaemon(dirs, { CAMPUSGATE_CONSOLE_DIR: consoleDir })
      context = await launchBrowser({ viewport: { width: 1280, height: 900 }, colorScheme: "light" })
      await context.route("**/*", (route) => {
        const target = new URL(route.request().url())
        if (target.protocol === "data:" || target.protocol === "blob:" || target.hostname === "127.0.0.1")
          return route.continue()
        outside.push(target.href)
        return route.abort()
      })
      page = context.pages()[0] ?? (await context.newPage())
      page.on("pageerror", (error) => pageErrors.push(error.message))
      page.on("console", (message) => {
        if (/Content.Security.Policy/i.test(message.text())) cspViolations.push(message.text())
      })
    }, 60_000)

    afterAll(async () => {
      await context?.close()
      await daemon?.stop()
    })

    it("puts an address at an unknown domain into the team's review queue, refused as unknown", async () => {
      for (const email of [`student@${APPROVED}`, `jo@${APPROVED}`]) {
        const result = await validate(email)
        expect(result.isValid).toBe(false)
        expect(result.reasonCode).toBe("UNKNOWN_INSTITUTION")
      }
      // The queue is written out periodically (every second): wait until the domain is in it.
      await expect
        .poll(() => queued("pending"), { timeout: 30_000, interval: 500 })
        .toEqual(expect.arrayContaining([APPROVED, REJECTED]))
      queueReady = true
    }, 60_000)

    it("shows a key without institutions:review no Reviews screen, and says why at its address", async () => {
      await signIn(plainKey)
      expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Reviews" }).count()).toBe(
        0
      )
      await page.goto(url("/console/reviews"))
      await heading("Reviews").waitFor()
      await page.locator("[data-no-review-scope]").waitFor()
      expect(await page.locator("[data-no-review-scope]").textContent()).toContain("institutions:review")
      expect(await page.locator("tr[data-review]").count()).toBe(0)
      await page.goto(url(`/console/reviews/${REJECTED}/`))
      await page.locator("[data-no-review-scope]").waitFor()
      await scan("reviews, without the scope")
      await signOut()
    })

    it("lists the pending domains with their count, last seen, likelihood and days, in the order asked", async () => {
      await signIn(reviewer.key)
      await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Reviews" }).click()
      await heading("Reviews").waitFor()
      expect(new URL(page.url()).pathname).toBe("/console/reviews")
      await expect.poll(rows).toEqual(await queued("pending"))
      const row = page.locator(`tr[data-review="${REJECTED}"]`)
      expect(await row.locator("[data-count]").getAttribute("data-count")).toBe("3")
      expect(await row.locator("[data-score]").textContent()).toMatch(/^\d{1,3}%/)
      expect(await row.locator("svg.day-bars rect").count()).toBe(30)
      await page.getByLabel("Order").selectOption("score")
      await expect.poll(rows).toEqual(await queued("pending", "score"))
      await scan("reviews")
      await shot("reviews-queue")
    })

    it("shows a domain's evidence: its signals in words, the nearest institutions and the target groups' verdicts", async () => {
      await page.getByRole("link", { name: REJECTED }).click()
      await heading(REJECTED).waitFor()
      expect(new URL(page.url()).pathname).toBe(`/console/reviews/${REJECTED}/`)
      const review = (await api("GET", `/api/v1/institution-reviews/${REJECTED}`)).body
      await page.locator("table.signals").waitFor()
      const shown = await page
        .locator("table.signals tbody tr")
        .evaluateAll((found) =>
          found.map((row) => [row.getAttribute("data-signal"), row.getAttribute("data-direction")])
        )
      // Each signal the API answers, weightiest first, for or against as its weight says.
      expect(shown).toEqual(signalLines(review.candidate.signals).map((line) => [line.signal, line.direction]))
      expect(shown.map(([, direction]) => direction)).toContain("against")
      expect(await page.locator("[data-nearest]").count()).toBe(review.nearest.length)
      const verdict = page.locator(`tr[data-decision="${GROUP.id}"]`)
      expect(await verdict.getAttribute("data-valid")).toBe("false")
      // The form starts from suggestions: the domain's words; no country for a .com.
      expect(await page.getByLabel("Name").inputValue()).toBe("Cheap Degrees Online")
      expect(await page.getByLabel("Country").inputValue()).toBe("")
      await scan("review")
      await shot("review-evidence")
    })

    it("shows the API's field messages beside the fields of a refused approval or rejection, then rejects with a reason", async () => {
      await page.getByLabel("Region (optional)").fill("nordheim")
      await page.getByRole("button", { name: "Approve" }).click()
      const region = page.getByLabel("Region (optional)")
      await expect.poll(() => region.getAttribute("aria-invalid")).toBe("true")
      expect(await page.locator("#approve-region-error").textContent()).toMatch(/\S/)
      expect(await page.getByRole("alert").first().textContent()).toMatch(/refused/)
      expect(await queued("pending")).toContain(REJECTED)
      await scan("review, refused")
      await shot("review-refused")

      await page.getByRole("button", { name: "Reject" }).click()
      const reason = page.getByLabel("Reason")
      await expect.poll(() => reason.getAttribute("aria-invalid")).toBe("true")
      expect(await page.locator("#reject-reason-error").textContent()).toMatch(/\S/)
      await reason.fill(REJECT_REASON)
      await page.getByRole("button", { name: "Reject" }).click()
      await page.locator("[data-decided=rejected]").waitFor()
      expect(await page.locator("[data-decided=rejected]").textContent()).toContain(REJECT_REASON)
      expect(await page.locator("[data-decided=rejected]").textContent()).toContain(reviewer.id)
      expect((await api("GET", `/api/v1/institution-reviews/${REJECTED}`)).body).toMatchObject({
        status: "rejected",
        rejection: { reason: REJECT_REASON, rejectedBy: reviewer.id }
      })
      expect((await validate(`buyer@${REJECTED}`)).isValid).toBe(false)
      // Rejected, it can still be approved: the approve form stays, the reject form goes.
      expect(await page.getByRole("button", { name: "Reject" }).count()).toBe(0)
      expect(await page.getByRole("button", { name: "Approve" }).count()).toBe(1)
    })

    it("approves the domain met through the API as a college in Germany: the API then validates an address there", async () => {
      expect(queueReady, `${APPROVED} never reached the queue (the first test says why)`).toBe(true)
      await page.goto(url(`/console/reviews/${APPROVED}/`))
      await heading(APPROVED).waitFor()
      await page.locator("table.signals").waitFor()
      expect(await page.locator(`tr[data-decision="${GROUP.id}"]`).textContent()).toContain("UNKNOWN_INSTITUTION")
      // Suggested from the domain: its words, the type its word families name, the country of .de.
      expect(await page.getByLabel("Name").inputValue()).toBe("Musikhochschule Nordheim")
      expect(await page.getByLabel("Type").inputValue()).toBe("college")
      expect(await page.getByLabel("Country").inputValue()).toBe("DE")
      await page.getByLabel("Name").fill(APPROVED_NAME)
      await page.getByLabel("Type").selectOption("college")
      await page.getByLabel("Country").selectOption("DE")
      await page.getByRole("button", { name: "Approve" }).click()
      await page.locator("[data-decided=approved]").waitFor()
      expect(await page.locator("[data-done]").textContent()).toContain(`Approved ${APPROVED}`)
      expect(await page.locator("[data-decided=approved]").textContent()).toContain(reviewer.id)
      expect((await api("GET", `/api/v1/institution-reviews/${APPROVED}`)).body).toMatchObject({
        status: "approved",
        approval: { name: APPROVED_NAME, type: "college", country: "DE", approvedBy: reviewer.id }
      })
      // Within a second, for the team's target groups.
      await expect.poll(async () => (await validate(`student@${APPROVED}`)).isValid, { timeout: 10_000 }).toBe(true)
      await scan("review, approved")
    })

    it("moves decided domains to their tabs and lists the decisions in the audit trail, newest first", async () => {
      await page.goto(url("/console/reviews"))
      await heading("Reviews").waitFor()
      await page.locator("table.audit").waitFor()
      await expect.poll(rows).toEqual(await queued("pending"))
      expect(await rows()).not.toContain(REJECTED)
      await page.getByText("Rejected", { exact: true }).click()
      await expect.poll(rows).toEqual([REJECTED])
      expect(await page.locator(`tr[data-review="${REJECTED}"]`).textContent()).toContain(REJECT_REASON)
      const audit = () =>
        page
          .locator("tr[data-audit]")
          .evaluateAll((found) =>
            found.map((row) => [
              row.getAttribute("data-audit"),
              row.getAttribute("data-decision"),
              row.querySelector("[data-by]")?.textContent
            ])
          )
      await scan("reviews, decided")
      await shot("reviews-audit")
      expect(queueReady, `${APPROVED} never reached the queue, so it was not approved`).toBe(true)
      expect(await rows()).not.toContain(APPROVED)
      await page.getByText("Approved", { exact: true }).click()
      await expect.poll(rows).toEqual([APPROVED])
      expect(await page.locator(`tr[data-review="${APPROVED}"]`).textContent()).toContain(APPROVED_NAME)
      expect(await audit()).toEqual([
        [APPROVED, "approved", reviewer.id],
        [REJECTED, "rejected", reviewer.id]
      ])
    })

    it("reads at a phone's width and in the dark", async () => {
      await page.setViewportSize({ width: 390, height: 844 })
      await page.goto(url(`/console/reviews/${REJECTED}/`))
      await heading(REJECTED).waitFor()
      await page.locator("table.signals").waitFor()
      await scan("review, phone")
      await shot("review-phone")
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
      expect(overflow, "the review page scrolls sideways at a phone's width").toBeLessThanOrEqual(0)
      await page.setViewportSize({ width: 1280, height: 900 })
      await page.emulateMedia({ colorScheme: "dark" })
      await page.goto(url("/console/reviews"))
      await page.locator("table.audit").waitFor()
      await scan("reviews, dark")
      await page.emulateMedia({ colorScheme: "light" })
    })

    it("loaded nothing from another host, broke no CSP rule and threw no error", () => {
      expect(outside).toEqual([])
      expect(cspViolations).toEqual([])
      expect(pageErrors).toEqual([])
    })
  }
)
