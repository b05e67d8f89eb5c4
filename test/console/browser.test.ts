/**
 * The operator console end to end, in a real headless browser (Debian's
 * chromium driven by playwright-core) against a real daemon on a sample
 * config with two teams (`demo.ts`), the console built from source into a
 * directory of the test's own. Signs in with a key (the page keeps no key
 * and no readable cookie), reads the offer chart's data points back from
 * uPlot's legend and the slider's value text after validations made
 * through the API, switches windows and checks the CSV export, pauses and
 * resumes the offer (the writes carry the CSRF token; one without it is
 * refused), tries an email, uploads a job and follows its progress bar to
 * 100% and downloads its results, cancels a running job, pages through the
 * jobs a job at a time (`?limit=1`) with the keyboard, reads the status and
 * the team's review queue (the demo's, with a domain's evidence; the
 * decisions are `reviews.browser.test.ts`'s), signs out, and checks
 * that another team's key sees none of the first team's offers. Every
 * screen is scanned by axe-core (no serious or critical violation) in
 * light, dark and at a phone's width, and photographed into
 * `test-artifacts/console/`. Nothing may load from another host, and the
 * page may cause no Content-Security-Policy violation. Without chromium
 * the test is skipped loudly, unless CAMPUSGATE_REQUIRE_BROWSER=1 (CI).
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { utcDate } from "../../console/src/data/days.ts"
import { browserAvailable, browserRequired, warnWithoutBrowser } from "../browser.ts"
import { call } from "../server/daemon.ts"
import { buildConsoleForBrowser, type ConsoleBrowser, openConsoleBrowser } from "./consoleBrowser.ts"
import { DEMO_HISTORY, DEMO_OFFER, DEMO_REVIEWS, DEMO_TODAY, type Demo, startDemo } from "./demo.ts"

// What the callbacks evaluated in the page use of its globals (this file is type-checked without the DOM library).
declare const window: { readonly innerWidth: number }
declare const document: {
  readonly cookie: string
  readonly activeElement: { readonly textContent: string | null } | null
  readonly documentElement: { readonly outerHTML: string; readonly scrollWidth: number }
}
declare const localStorage: { readonly length: number }
declare const sessionStorage: { readonly length: number }

warnWithoutBrowser("the console's browser test")

const DAY_MS = 86_400_000
const today = () => utcDate(Date.now())
const daysAgo = (days: number) => utcDate(Date.now() - days * DAY_MS)

/** The counts of a day `days` before today: the written history, or today's validations made through the API. */
const expectedDay = (days: number) => {
  if (days === 0) {
    const eligible = DEMO_TODAY.filter(([, valid]) => valid).length
    return { validations: DEMO_TODAY.length, eligible, ineligible: DEMO_TODAY.length - eligible }
  }
  const day = DEMO_HISTORY.find((past) => past.daysAgo === days)
  return day === undefined
    ? { validations: 0, eligible: 0, ineligible: 0 }
    : { validations: day.eligible + day.ineligible, eligible: day.eligible, ineligible: day.ineligible }
}

const windowTotal = (days: number) =>
  Array.from({ length: days }, (_, index) => expectedDay(index).validations).reduce((sum, count) => sum + count, 0)

describe.skipIf(!browserAvailable && !browserRequired)("the console in a real headless browser", () => {
  let demo: Demo
  let ui: ConsoleBrowser
  let page: Page

  const api = (method: string, path: string, body?: unknown) =>
    call(demo.daemon, method, path, { key: demo.acmeKey, ...(body === undefined ? {} : { body }) })

  const offerIds = () =>
    page.locator("tr[data-offer]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-offer")))

  /** The values uPlot's legend shows, by series label. */
  const legend = () =>
    page
      .locator(".u-legend .u-series")
      .evaluateAll((rows) =>
        Object.fromEntries(
          rows.map((row) => [
            row.querySelector(".u-label")?.textContent?.trim() ?? "",
            row.querySelector(".u-value")?.textContent?.trim() ?? ""
          ])
        )
      )

  beforeAll(async () => {
    demo = await startDemo({ consoleDir: await buildConsoleForBrowser() })
    ui = await openConsoleBrowser(demo.daemon.url, { acceptDownloads: true })
    page = ui.page
  }, 60_000)

  afterAll(async () => {
    await ui?.context.close()
    await demo?.daemon.stop()
  })

  it("signs in with a key, keeps neither the key nor a readable cookie, and lists the team's offers", async () => {
    await page.goto(ui.url("/console"))
    await page.getByRole("heading", { name: "Campusgate console" }).waitFor()
    await ui.scan("sign-in")
    await ui.shot("sign-in")

    await page.getByLabel("API key").fill("cgk_not-a-key-of-this-deployment")
    await page.getByRole("button", { name: "Sign in" }).click()
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/.+/)
    await expect(page.getByRole("heading", { name: "Campusgate console" }).isVisible()).resolves.toBe(true)

    await page.getByLabel("API key").fill(demo.acmeKey)
    await page.getByRole("button", { name: "Sign in" }).click()
    await ui.heading("Offers").waitFor()
    expect(await page.locator("[data-team]").textContent()).toBe("acme")
    const stored = await page.evaluate(() => ({
      local: localStorage.length,
      session: sessionStorage.length,
      cookie: document.cookie,
      html: document.documentElement.outerHTML
    }))
    expect(stored.local).toBe(0)
    expect(stored.session).toBe(0)
    expect(stored.cookie).toBe("")
    expect(stored.html).not.toContain(demo.acmeKey)
    const [cookie] = (await ui.context.cookies()).filter((entry) => entry.name === "campusgate_console")
    expect(cookie?.httpOnly).toBe(true)
    expect(cookie?.sameSite).toBe("Strict")

    await page.locator("tr[data-offer]").first().waitFor()
    const ids = await offerIds()
    expect(ids).toContain(DEMO_OFFER.id)
    expect(ids).toContain("acme-student-discount")
    expect(ids.every((id) => id?.startsWith("acme-"))).toBe(true)
    await page.getByLabel("Search").fill("spring SALE")
    await expect.poll(offerIds).toEqual([DEMO_OFFER.id])
    await page.getByLabel("Search").fill("")
    await page.getByLabel("Status").selectOption("paused")
    await expect.poll(offerIds).toEqual([])
    await page.getByLabel("Status").selectOption("all")
    await ui.scan("offers")
    await ui.shot("offers")

    // A reload keeps the session: the page asks the daemon for it.
    await page.reload()
    await ui.heading("Offers").waitFor()
  })

  it("draws the offer's daily validations, eligible and ineligible, including those just made through the API", async () => {
    await page.getByRole("link", { name: DEMO_OFFER.name }).click()
    await ui.heading(DEMO_OFFER.name).waitFor()
    await page.locator(".uplot").waitFor()
    expect(new URL(page.url()).pathname).toBe(`/console/offers/${DEMO_OFFER.id}`)

    // The legend starts on today: the validations made through the API a moment ago.
    const now = expectedDay(0)
    await expect.poll(legend).toEqual({
      Day: today(),
      Validations: String(now.validations),
      Eligible: String(now.eligible),
      Ineligible: String(now.ineligible)
    })
    // Day by day with the keyboard: the slider's value text and uPlot's legend say the same counts.
    const slider = page.getByRole("slider")
    await slider.focus()
    expect(await slider.getAttribute("aria-valuemax")).toBe("29")
    for (const back of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
      await page.keyboard.press("ArrowLeft")
      const day = expectedDay(back)
      expect(await slider.getAttribute("aria-valuetext")).toBe(
        `${daysAgo(back)}: ${day.validations} validations, ${day.eligible} eligible, ${day.ineligible} ineligible`
      )
      expect(await legend()).toEqual({
        Day: daysAgo(back),
        Validations: String(day.validations),
        Eligible: String(day.eligible),
        Ineligible: String(day.ineligible)
      })
    }
    // The pointer over the plot reads the day under it: the oldest day of the window on the far left.
    const plot = await page.locator(".u-over").boundingBox()
    await page.mouse.move(plot!.x + 1, plot!.y + plot!.height / 2)
    const oldest = expectedDay(29)
    await expect.poll(legend).toMatchObject({ Day: daysAgo(29), Validations: String(oldest.validations) })

    // The totals and the table follow the window.
    expect(await page.locator("[data-figure=validations]").textContent()).toBe(windowTotal(30).toLocaleString("en"))
    await page.getByText("The figures as a table").click()
    expect(await page.locator("table.daily tbody tr").count()).toBe(30)
    expect(await page.locator(`table.daily tr[data-date="${today()}"] td`).allTextContents()).toEqual(
      [now.validations, now.eligible, now.ineligible].map(String)
    )
    await page.getByText("7 days", { exact: true }).click()
    await expect.poll(() => page.locator("table.daily tbody tr").count()).toBe(7)
    expect(await slider.getAttribute("aria-valuemax")).toBe("6")
    expect(await page.locator("[data-figure=validations]").textContent()).toBe(windowTotal(7).toLocaleString("en"))
    await page.getByText("90 days", { exact: true }).click()
    await expect.poll(() => page.locator("table.daily tbody tr").count()).toBe(90)
    expect(await page.locator("[data-figure=validations]").textContent()).toBe(windowTotal(90).toLocaleString("en"))

    // Reasons, matches and the funnel are the offer's own figures as the API answers them.
    const usage = (await api("GET", `/api/v1/offers/${DEMO_OFFER.id}/status`)).body.usage
    const bars = (list: string) =>
      page
        .locator(`ul[aria-label="${list}"] li`)
        .evaluateAll((rows) =>
          Object.fromEntries(rows.map((row) => [row.getAttribute("data-name"), Number(row.getAttribute("data-count"))]))
        )
    expect(await bars("Ineligible validations by reason")).toEqual(usage.ineligibleByReason)
    expect(await bars("Eligible validations by matching target group")).toEqual(usage.matchesByTargetGroup)
    const verificationStep = (step: string) => page.locator(`ol[aria-label="Verification funnel"] [data-step=${step}]`)
    expect(await verificationStep("started").locator(".bar-value").textContent()).toMatch(/^64 /)
    expect(await verificationStep("verified").locator(".bar-value").textContent()).toMatch(/^41 /)
    // The hosted page's funnel: each step with its share of the flows started, and where flows stopped.
    const hostedStep = (step: string) => page.locator(`ol[aria-label="Hosted page funnel"] [data-step=${step}]`)
    expect(usage.hostedFlow).toMatchObject({ started: 90, abandonedAtEmailStep: 38, abandonedAtCodeStep: 15 })
    expect(await hostedStep("started").locator(".bar-value").textContent()).toBe("90 (100%)")
    expect(await hostedStep("reachedCodeStep").locator(".bar-name").textContent()).toBe("Reached the code step")
    expect(await hostedStep("reachedCodeStep").locator(".bar-value").textContent()).toBe("52 (57.8%)")
    expect(await hostedStep("completed").locator(".bar-value").textContent()).toBe("37 (41.1%)")
    const stopped = (figure: string) =>
      page.locator(`dl[aria-label="Where hosted flows stopped"] [data-figure=${figure}]`)
    expect(await stopped("abandonedAtEmailStep").textContent()).toBe("38 (42.2% of flows)")
    expect(await stopped("abandonedAtCodeStep").textContent()).toBe("15 (16.7% of flows)")
    expect(await stopped("ineligibleSubmissions").textContent()).toBe("11")

    // The CSV export is the window shown, oldest day first.
    await page.getByText("7 days", { exact: true }).click()
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: /Download CSV/ }).click()
    ])
    expect(download.suggestedFilename()).toBe(`${DEMO_OFFER.id}-${today()}-7d.csv`)
    const rows = Array.from({ length: 7 }, (_, index) => {
      const back = 6 - index
      const day = expectedDay(back)
      return `${daysAgo(back)},${day.validations},${day.eligible},${day.ineligible}\r\n`
    })
    expect(readFileSync((await download.path())!, "utf8")).toBe(
      `date,validations,eligible,ineligible\r\n${rows.join("")}`
    )
    await page.getByText("30 days", { exact: true }).click()
    await ui.scan("offer")
    await ui.shot("offer")
  })

  it("pauses and resumes an offer made through the API, with the CSRF token; a write without it is refused", async () => {
    await page.getByRole("button", { name: "Pause" }).click()
    await expect.poll(() => page.locator(".offer-status .badge").textContent()).toBe("paused")
    expect((await api("GET", `/api/v1/offers/${DEMO_OFFER.id}`)).body.status).toBe("paused")
    await page.getByRole("button", { name: "Resume" }).click()
    await expect.poll(() => page.locator(".offer-status .badge").textContent()).toBe("active")
    expect((await api("GET", `/api/v1/offers/${DEMO_OFFER.id}`)).body.status).toBe("active")

    const refused = await page.evaluate(async (id) => {
      const response = await fetch(`/api/v1/offers/${id}`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ status: "paused" })
      })
      return response.status
    }, DEMO_OFFER.id)
    expect(refused).toBe(403)
    expect((await api("GET", `/api/v1/offers/${DEMO_OFFER.id}`)).body.status).toBe("active")
  })

  it("tries an email on a target group and explains each criterion with the institution found", async () => {
    await page.getByRole("link", { name: "Target groups" }).click()
    await ui.heading("Target groups").waitFor()
    await page.locator("[data-target-group=uk-students]").waitFor()
    await page.getByLabel("Email", { exact: true }).fill("jane@ox.ac.uk")
    await page.getByLabel("Target group").selectOption("uk-students")
    await page.getByRole("button", { name: "Try" }).click()
    const verdict = page.locator(".verdict")
    await verdict.waitFor()
    expect(await verdict.getAttribute("data-valid")).toBe("true")
    const outcomes = await page
      .locator("table.explanation tbody tr")
      .evaluateAll((rows) =>
        Object.fromEntries(rows.map((row) => [row.getAttribute("data-criterion"), row.getAttribute("data-outcome")]))
      )
    expect(Object.keys(outcomes).sort()).toEqual(
      ["customList", "domain", "emailPolicy", "format", "geography", "organisationType"].sort()
    )
    expect(outcomes.format).toBe("pass")
    expect(outcomes.domain).toBe("pass")
    expect(await page.locator("table.explanation tbody td:last-child").allTextContents()).toContainEqual(
      expect.stringMatching(/\S/)
    )
    expect(await page.locator("[data-institution]").getAttribute("data-institution")).toBe("ox.ac.uk")
    expect(await page.locator("[data-institution]").textContent()).toContain("University of Oxford")
    await ui.scan("target-groups")
    await ui.shot("target-groups")

    await page.getByLabel("Email", { exact: true }).fill("admin@ox.ac.uk")
    await page.getByRole("button", { name: "Try" }).click()
    await expect.poll(() => verdict.getAttribute("data-valid")).toBe("false")
    expect(await page.locator("table.explanation tr[data-criterion=emailPolicy]").getAttribute("data-outcome")).toBe(
      "fail"
    )
  })

  it("uploads a CSV as a job, follows its progress bar to 100% and downloads its results", async () => {
    await page.getByRole("link", { name: "Jobs" }).click()
    await ui.heading("Jobs").waitFor()
    const emails = Array.from({ length: 1500 }, (_, index) =>
      index % 3 === 0
        ? `student${index}@ox.ac.uk`
        : index % 3 === 1
          ? `person${index}@samples.com`
          : `s${index}@cam.ac.uk`
    )
    await page.getByLabel("Validate against").selectOption("targetGroupId:uk-students")
    await page.getByLabel("CSV or NDJSON file").setInputFiles({
      name: "students.csv",
      mimeType: "text/csv",
      buffer: Buffer.from(`customer,email\r\n${emails.map((email, index) => `c${index},${email}`).join("\r\n")}\r\n`)
    })
    await page.getByRole("button", { name: "Start job" }).click()
    const started = await page.getByRole("status").filter({ hasText: "Started" }).textContent()
    const jobId = /job_[0-9a-f]{32}/.exec(started ?? "")?.[0]
    expect(jobId).toBeDefined()
    const row = page.locator(`tr[data-job=${jobId}]`)
    await row.waitFor()
    const progress = page.getByRole("progressbar", { name: `Progress of ${jobId}` })
    await expect
      .poll(() => progress.evaluate((bar) => (bar as unknown as { value: number }).value), { timeout: 30_000 })
      .toBe(100)
    await expect.poll(() => row.getAttribute("data-status")).toBe("completed")
    const job = (await api("GET", `/api/v1/jobs/${jobId}`)).body
    expect(job.progress).toMatchObject({ total: 1500, processed: 1500, percent: 100 })
    expect(await row.locator("[data-count=valid]").textContent()).toBe(job.counts.valid.toLocaleString("en"))
    expect(await row.locator("[data-count=invalid]").textContent()).toBe(job.counts.invalid.toLocaleString("en"))
    expect(job.counts.valid).toBe(1000)
    await ui.scan("jobs")
    await ui.shot("jobs")

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      row.getByRole("link", { name: `CSV results of ${jobId}` }).click()
    ])
    const csv = readFileSync((await download.path())!, "utf8")
    const lines = csv.trimEnd().split(/\r?\n/)
    expect(lines).toHaveLength(1 + 1500)
    expect(lines[0]).toMatch(/email/)
    expect(lines[1]).toContain("student0@ox.ac.uk")
    expect(lines[2]).toContain("person1@samples.com")
  })

  it("cancels a running job: the list and the API say cancelled, with emails left unprocessed", async () => {
    // A million emails, evaluated a batch at a time on the daemon's own thread (the demo's
    // jobs.workerThreads: 0), take seconds (about 6 s on a quiet 2-core machine); the cancel
    // below follows the upload's answer by one read of the list.
    const total = 1_000_000
    const file = join(mkdtempSync(join(tmpdir(), "campusgate-console-job-")), "everyone.ndjson")
    writeFileSync(file, `${Array.from({ length: total }, (_, index) => `"s${index}@ox.ac.uk"`).join("\n")}\n`)
    await page.getByLabel("Validate against").selectOption("targetGroupId:uk-students")
    await page.getByLabel("CSV or NDJSON file").setInputFiles(file)
    await page.getByRole("button", { name: "Start job" }).click()
    const started = await page.getByRole("status").filter({ hasText: "everyone.ndjson" }).textContent()
    const jobId = /job_[0-9a-f]{32}/.exec(started ?? "")?.[0]
    expect(jobId).toBeDefined()
    const row = page.locator(`tr[data-job=${jobId}]`)
    await row.getByRole("button", { name: `Cancel ${jobId}` }).click()
    await expect.poll(() => row.getAttribute("data-status"), { timeout: 30_000 }).toBe("cancelled")
    expect(await row.locator(".badge").textContent()).toBe("cancelled")
    expect(await row.getByRole("button").count()).toBe(0)
    expect(await row.getByRole("link").count()).toBe(0)
    const job = (await api("GET", `/api/v1/jobs/${jobId}`)).body
    expect(job.status).toBe("cancelled")
    expect(job.progress.total).toBe(total)
    expect(job.progress.processed).toBeLessThan(total)
    await ui.scan("jobs, cancelled")
  }, 60_000)

  it("pages through every job with the list API's limit and cursor, by keyboard", async () => {
    const jobIds = () =>
      page.locator("tr[data-job]").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-job")))
    const all = (await api("GET", "/api/v1/jobs")).body.data.map((job: { jobId: string }) => job.jobId)
    expect(all).toHaveLength(2)
    // One job a page: the job uploaded first is on the second page.
    await page.goto(ui.url("/console/jobs?limit=1"))
    await ui.heading("Jobs").waitFor()
    await expect.poll(jobIds).toEqual([all[0]])
    expect(await page.getByText("Showing the newest job.").count()).toBe(1)
    const more = page.getByRole("button", { name: "Load more jobs" })
    await more.waitFor()
    // Reached with Tab from the heading, pressed with Enter.
    const focused = () => more.evaluate((button) => button === document.activeElement)
    for (let presses = 0; presses < 20 && !(await focused()); presses++) await page.keyboard.press("Tab")
    expect(await focused(), "Load more jobs is not reached with Tab").toBe(true)
    await page.keyboard.press("Enter")
    await expect.poll(jobIds).toEqual(all)
    // The focus is on the first job of the page read; the list has ended.
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe(all[1])
    expect(await more.count()).toBe(0)
    expect(await page.getByText("All 2 jobs shown.").count()).toBe(1)
    await ui.scan("jobs, paged")
  })

  it("shows the configuration in force, the daemon and the team's keys that expire soon", async () => {
    await page.getByRole("link", { name: "Status" }).click()
    await ui.heading("Status").waitFor()
    await page.locator("[data-fact=generation]").waitFor()
    const status = (await api("GET", "/api/v1/status")).body
    expect(await page.locator("[data-fact=generation]").textContent()).toBe(String(status.config.generation))
    expect(await page.locator("[data-fact=version]").textContent()).toBe(status.version)
    expect(await page.locator(`[data-key="${demo.expiringKeyId}"]`).textContent()).toContain("expires in 5 days")
    await ui.scan("status")
    await ui.shot("status")
  })

  it("lists the team's review queue, and a domain's evidence", async () => {
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Reviews" }).click()
    await ui.heading("Reviews").waitFor()
    // The screens come in a chunk of their own; once it is in, the focus is on the heading, as on every navigation.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe("Reviews")
    const rows = () =>
      page.locator("tr[data-review]").evaluateAll((found) => found.map((row) => row.getAttribute("data-review")))
    const queue = (await api("GET", "/api/v1/institution-reviews")).body
    const domains = queue.data.map((review: { domain: string }) => review.domain)
    // The demo's queue, and the unknown domains the validations above met (partner-college.org, samples.com…).
    expect(domains).toEqual(expect.arrayContaining(DEMO_REVIEWS.map((review) => review.domain)))
    await expect.poll(rows).toEqual(domains)
    const first = queue.data[0]
    expect(await page.locator(`tr[data-review="${first.domain}"] [data-count]`).textContent()).toBe(String(first.count))
    await page.locator("table.audit, .note").last().waitFor()
    await ui.scan("reviews")
    await ui.shot("reviews")
    await page.getByRole("link", { name: first.domain }).click()
    await ui.heading(first.domain).waitFor()
    await page.locator("table.signals").waitFor()
    expect(await page.locator("table.signals tbody tr").count()).toBe(first.candidate.signals.length)
    expect(await page.locator("tr[data-decision]").count()).toBe(first.decisions.length)
    await ui.scan("review")
    await ui.shot("review")
  })

  it("reads in the dark and at a phone's width", async () => {
    await page.emulateMedia({ colorScheme: "dark" })
    await page.goto(ui.url(`/console/offers/${DEMO_OFFER.id}`))
    await ui.heading(DEMO_OFFER.name).waitFor()
    await page.locator(".uplot").waitFor()
    await ui.scan("offer, dark")
    await ui.shot("offer-dark")
    await page.emulateMedia({ colorScheme: "light" })

    await page.setViewportSize({ width: 390, height: 844 })
    await page.reload()
    await page.locator(".uplot").waitFor()
    await ui.scan("offer, phone")
    await ui.shot("offer-phone")
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth)
    expect(overflow, "the page scrolls sideways at a phone's width").toBeLessThanOrEqual(0)
    await page.goto(ui.url("/console/offers"))
    await page.locator("tr[data-offer]").first().waitFor()
    await ui.scan("offers, phone")
    await ui.shot("offers-phone")
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  it("signs out: the session is gone, for the page and the API", async () => {
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByLabel("API key").waitFor()
    expect(await page.getByRole("status").textContent()).toContain("Signed out")
    expect(await page.evaluate(async () => (await fetch("/api/v1/offers")).status)).toBe(401)
    await page.reload()
    await page.getByLabel("API key").waitFor()
  })

  it("shows another team's key none of the first team's offers", async () => {
    await ui.signIn(demo.globexKey)
    await page.locator("tr[data-offer]").first().waitFor()
    // A key without institutions:review is not offered the Reviews screen.
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Reviews" }).count()).toBe(0)
    const ids = await offerIds()
    expect(ids.length).toBeGreaterThan(0)
    expect(ids.every((id) => id?.startsWith("globex-"))).toBe(true)
    await page.goto(ui.url(`/console/offers/${DEMO_OFFER.id}`))
    await expect.poll(() => page.getByRole("alert").textContent()).toMatch(/not found|no offer/i)
    await page.getByRole("link", { name: "Jobs" }).click()
    await ui.heading("Jobs").waitFor()
    await expect.poll(() => page.locator("tr[data-job]").count()).toBe(0)
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByLabel("API key").waitFor()
  })

  it("loaded nothing from another host, broke no CSP rule and threw no error", () => {
    expect(ui.outside).toEqual([])
    expect(ui.cspViolations).toEqual([])
    expect(ui.pageErrors).toEqual([])
  })
})
