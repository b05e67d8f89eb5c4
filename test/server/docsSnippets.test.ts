/**
 * Every curl snippet the docs page generates works when pasted: the page is
 * rendered in chromium against the daemon on the shipped config, every
 * snippet is read from it, the bootstrap key the daemon printed is put in
 * place of `YOUR_SECRET_TOKEN`, and each runs with curl against the daemon.
 * Snippets that create run first and those that delete last; a job's, a
 * verification's and an API key's id exist only once made, so the snippets
 * naming them take the id the submission answered (a real job flow). Each answer is a 2xx,
 * but for the two examples that show a documented refusal: a code that is
 * not the one sent (400), a resend before its time (429).
 */
import { execFileSync } from "node:child_process"
import { describe, expect, it } from "vitest"
import { apiEndpoints } from "../../src/api/Api.ts"
import { browserAvailable, browserRequired, CHROMIUM, launchBrowser, warnWithoutBrowser } from "../browser.ts"
import { sharedDaemon, waitForJob } from "./daemon.ts"

warnWithoutBrowser("the docs page's snippets")

// What the page's script reads in the browser (the tests' types have no DOM).
declare const document: { readonly scrollingElement: { scrollTop: number; readonly scrollHeight: number } | null }

const daemon = sharedDaemon()

/** Every curl snippet of the docs page, each operation's once, the whole page unfolded and scrolled through. */
const snippetsOfPage = async (url: string): Promise<Array<string>> => {
  const context = await launchBrowser()
  try {
    const page = await context.newPage()
    await page.goto(`${url}/docs`, { waitUntil: "networkidle" })
    await page.locator("pre, code", { hasText: "curl" }).first().waitFor({ timeout: 30_000 })
    const seen = new Set<string>()
    const height = await page.evaluate(() => document.scrollingElement!.scrollHeight)
    for (let y = 0; y <= height + 1000; y += 600) {
      await page.evaluate((top) => {
        document.scrollingElement!.scrollTop = top
      }, y)
      await page.waitForTimeout(40)
      const texts = await page
        .locator("pre, code", { hasText: "curl" })
        .evaluateAll((elements) => elements.map((element) => element.textContent ?? ""))
      for (const text of texts) if (text.trimStart().startsWith("curl ")) seen.add(text.trim())
    }
    return [...seen]
  } finally {
    await context.close()
  }
}

interface Snippet {
  readonly text: string
  readonly method: string
  readonly path: string
}

const parse = (text: string): Snippet => ({
  text,
  method: /--request (\w+)/.exec(text)?.[1] ?? "GET",
  path: new URL(/curl '?(http[^'\s]+)/.exec(text)![1]!).pathname
})

/** Creates first (a POST to a collection), then reads, changes and sends, and deletions last. */
const rank = ({ method, path }: Snippet): number => {
  if (method === "DELETE") return 4
  if (method === "POST" && !/\/(ver|job)_|\/confirm$|\/resend$/.test(path) && !path.endsWith("reset-limit")) return 0
  if (method === "GET") return 1
  if (method === "PATCH") return 2
  return 3
}

/** The answers a snippet may get: its example shows a documented refusal, or a 2xx. */
const expected = ({ path }: Snippet): ReadonlyArray<number> => {
  if (path.endsWith("/confirm")) return [400]
  if (path.endsWith("/resend")) return [429]
  return [200, 201, 202, 204]
}

/** Runs a snippet as pasted into a shell, its key and made ids put in; answers the status and the body. */
const run = (snippet: Snippet, replacements: ReadonlyMap<string, string>) => {
  let text = snippet.text
  for (const [from, to] of replacements) text = text.replaceAll(from, to)
  const output = execFileSync("bash", ["-c", `${text} --silent --show-error --write-out '\\n%{http_code}'`], {
    encoding: "utf8"
  })
  const lines = output.trimEnd().split("\n")
  return { status: Number(lines.at(-1)), body: lines.slice(0, -1).join("\n") }
}

describe.skipIf(!browserAvailable && !browserRequired)("the docs page's curl snippets", () => {
  it("all work when pasted with the bootstrap key: one per operation, each answered as documented", async () => {
    expect(browserAvailable, `CAMPUSGATE_REQUIRE_BROWSER=1 but there is no chromium at ${CHROMIUM}`).toBe(true)
    const bootstrap = daemon.lines.find((line) => line.msg === "created the first API key; it is shown only this once")
    expect(bootstrap?.key).toEqual(expect.any(String))
    const snippets = (await snippetsOfPage(daemon.url)).map(parse)
    expect(snippets).toHaveLength(apiEndpoints.length)
    const document = (await (await fetch(`${daemon.url}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<string, { parameters?: Array<{ in: string; schema?: { examples?: Array<string> } }> }>
      >
    }
    const jobExample = document.paths["/api/v1/jobs/{jobId}"]!.get!.parameters!.find((p) => p.in === "path")!.schema!
      .examples![0]!
    const verificationExample = document.paths["/api/v1/verifications/{id}"]!.get!.parameters!.find(
      (p) => p.in === "path"
    )!.schema!.examples![0]!
    const keyExample = document.paths["/api/v1/keys/{id}"]!.delete!.parameters!.find((p) => p.in === "path")!.schema!
      .examples![0]!
    const replacements = new Map([["YOUR_SECRET_TOKEN", String(bootstrap!.key)]])
    const failures: Array<string> = []
    for (const snippet of [...snippets].sort((a, b) => rank(a) - rank(b))) {
      const answer = run(snippet, replacements)
      if (!expected(snippet).includes(answer.status))
        failures.push(`${snippet.method} ${snippet.path}: ${answer.status} ${answer.body.slice(0, 300)}`)
      // A real job flow: the job submitted is the one the job snippets name, once it has finished.
      if (snippet.path.endsWith("/bulk-async") && answer.status === 202) {
        const { jobId } = JSON.parse(answer.body) as { jobId: string }
        replacements.set(jobExample, jobId)
        await waitForJob(daemon, String(bootstrap!.key), jobId)
      }
      if (snippet.method === "POST" && snippet.path === "/api/v1/verifications" && answer.status === 201)
        replacements.set(verificationExample, (JSON.parse(answer.body) as { id: string }).id)
      // The revoke snippet revokes the key the create snippet made, never the bootstrap key the others use.
      if (snippet.method === "POST" && snippet.path === "/api/v1/keys" && answer.status === 201)
        replacements.set(keyExample, (JSON.parse(answer.body) as { id: string }).id)
    }
    expect(failures).toEqual([])
  }, 180_000)
})
