/**
 * The console's files as a browser gets them, from a directory of static
 * files made here (`CAMPUSGATE_CONSOLE_DIR`), so the test does not depend on
 * the console's build: the page for every app address, hashed assets cached
 * for good and compressed (the build's own `.br` when it made one), the
 * strict security header fields on every answer under `/console`, and no
 * way out of the directory.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { brotliCompressSync } from "node:zlib"
import { describe, expect, it } from "vitest"
import { CONSOLE_CSP } from "../../src/server/console.ts"
import { readConsoleFiles } from "../../src/server/consoleAssets.ts"
import { sharedDaemon } from "./daemon.ts"

const page = `<!doctype html><html lang="en"><head><script type="module" src="/console/assets/app-3f9a.js"></script></head><body></body></html>`
const script = `export const console = "${"x".repeat(4000)}"\n`
const styles = `body { color: black; }\n`
// Not what the identity compresses to: shows the build's own form is sent.
const prebuilt = brotliCompressSync(Buffer.from(`${styles}/* from the build */\n`))

/** A console directory as the build makes it. */
const consoleDir = (): string => {
  const root = mkdtempSync(join(tmpdir(), "campusgate-console-"))
  mkdirSync(join(root, "assets"))
  writeFileSync(join(root, "index.html"), page)
  writeFileSync(join(root, "assets", "app-3f9a.js"), script)
  writeFileSync(join(root, "assets", "app-77c1.css"), styles)
  writeFileSync(join(root, "assets", "app-77c1.css.br"), prebuilt)
  writeFileSync(join(root, "favicon.svg"), `<svg xmlns="http://www.w3.org/2000/svg"/>`)
  return root
}

const daemon = sharedDaemon(() => ({ CAMPUSGATE_CONSOLE_DIR: consoleDir() }))

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${daemon.url}${path}`, { headers })

const expectConsoleHeaders = (response: Response) => {
  expect(response.headers.get("content-security-policy")).toBe(CONSOLE_CSP)
  expect(response.headers.get("x-content-type-options")).toBe("nosniff")
  expect(response.headers.get("referrer-policy")).toBe("no-referrer")
}

describe("the console's files", () => {
  it("answers the page, revalidated, for /console and every app address without a file extension", async () => {
    for (const path of ["/console", "/console/", "/console/offers", "/console/offers/acme-student-discount"]) {
      const response = await get(path, { "accept-encoding": "gzip" })
      expect(response.status, path).toBe(200)
      expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8")
      expect(response.headers.get("cache-control")).toBe("no-cache")
      expect(response.headers.get("content-encoding")).toBe("gzip")
      expectConsoleHeaders(response)
      expect(await response.text()).toBe(page)
    }
    const first = await get("/console")
    const again = await get("/console/jobs", { "if-none-match": first.headers.get("etag")! })
    expect(again.status).toBe(304)
  })

  it("serves hashed assets cached for good, compressed when accepted", async () => {
    const response = await get("/console/assets/app-3f9a.js", { "accept-encoding": "br, gzip" })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/javascript; charset=utf-8")
    expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(response.headers.get("content-encoding")).toBe("br")
    expect(Number(response.headers.get("content-length"))).toBeLessThan(script.length / 10)
    expectConsoleHeaders(response)
    expect(await response.text()).toBe(script)
    const plain = await get("/console/assets/app-3f9a.js", { "accept-encoding": "identity" })
    expect(plain.headers.get("content-encoding")).toBeNull()
    expect(Number(plain.headers.get("content-length"))).toBe(script.length)
  })

  it("sends the build's own compressed form when there is one", async () => {
    const response = await get("/console/assets/app-77c1.css", { "accept-encoding": "br" })
    expect(response.headers.get("content-type")).toBe("text/css; charset=utf-8")
    expect(response.headers.get("content-encoding")).toBe("br")
    expect(await response.text()).toContain("/* from the build */")
    // A client that takes no brotli gets the file itself (the build made no gzip form).
    const plain = await get("/console/assets/app-77c1.css", { "accept-encoding": "gzip" })
    expect(plain.headers.get("content-encoding")).toBeNull()
    expect(await plain.text()).toBe(styles)
  })

  it("serves other files of the directory revalidated", async () => {
    const response = await get("/console/favicon.svg")
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("image/svg+xml")
    expect(response.headers.get("cache-control")).toBe("no-cache")
  })

  it("answers a missing file, or a path out of the directory, with a 404 problem carrying the same header fields", async () => {
    for (const path of [
      "/console/assets/app-0000.js",
      "/console/..%2Fconfig%2Fcampusgate.yaml",
      "/console/assets/..%2F..%2Findex.html.bak"
    ]) {
      const response = await get(path)
      expect(response.status, path).toBe(404)
      expect(response.headers.get("content-type")).toBe("application/problem+json")
      expectConsoleHeaders(response)
    }
  })

  it("leaves answers outside /console without the console's policy", async () => {
    const response = await get("/healthz")
    expect(response.headers.get("content-security-policy")).toBeNull()
  })
})

describe("readConsoleFiles", () => {
  it("finds no console in a directory without index.html (the build has not run)", () => {
    expect(readConsoleFiles(mkdtempSync(join(tmpdir(), "campusgate-console-")))).toBeUndefined()
  })
})
