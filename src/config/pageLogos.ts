/**
 * The logos of the hosted verification page (`verification.page.logo` of
 * an offer or of the deployment), read with the config so a missing,
 * oversized or mistyped file is reported with its position like any other
 * problem, and served by the daemon itself (no request leaves for another
 * host). A logo is a file in the config directory (a relative path, never
 * outside it), at most `MAX_LOGO_BYTES`, and a PNG, JPEG, WebP or SVG whose
 * bytes say so.
 */
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs"
import { extname, relative, resolve, sep } from "node:path"
import type { ConfigurationProblem } from "../domain/errors.ts"
import type { Offer } from "../domain/Offer.ts"
import { problemAt, type SourceFile } from "./references.ts"
import type { Settings } from "./Settings.ts"

export const MAX_LOGO_BYTES = 256 * 1024

export interface PageLogo {
  readonly contentType: "image/png" | "image/jpeg" | "image/webp" | "image/svg+xml"
  readonly bytes: Uint8Array
}

const TYPES: Readonly<Record<string, PageLogo["contentType"]>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".webp": "image/webp",
  ".svg": "image/svg+xml"
}

/** Whether the bytes are of the type the name says. */
const looksLike = (type: PageLogo["contentType"], bytes: Buffer): boolean => {
  switch (type) {
    case "image/png":
      return bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    case "image/jpeg":
      return bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff
    case "image/webp":
      return bytes.subarray(0, 4).toString("latin1") === "RIFF" && bytes.subarray(8, 12).toString("latin1") === "WEBP"
    case "image/svg+xml":
      return /<svg[\s>]/.test(bytes.subarray(0, 4096).toString("utf8"))
  }
}

/** What is wrong with the logo at `path` (relative to `configDir`), or the logo. */
const readLogo = (configDir: string, path: string): PageLogo | string => {
  const full = resolve(configDir, path)
  if (!existsSync(full) || !statSync(full).isFile()) {
    return `"${path}": no such file (paths are relative to the config directory)`
  }
  const inside = relative(realpathSync(configDir), realpathSync(full))
  if (inside.startsWith(`..${sep}`) || inside === "..") return `"${path}": the logo must be inside the config directory`
  const type = TYPES[extname(full).toLowerCase()]
  if (type === undefined) return `"${path}": a logo is a .png, .svg, .jpg, .jpeg or .webp file`
  if (statSync(full).size > MAX_LOGO_BYTES) return `"${path}": a logo is at most ${MAX_LOGO_BYTES / 1024} KB`
  const bytes = readFileSync(full)
  if (!looksLike(type, bytes)) return `"${path}": the file is not the ${type} its name says`
  return { contentType: type, bytes: new Uint8Array(bytes) }
}

/** Every logo the offers and the deployment name, by path as written; problems are added to `problems`. */
export const readPageLogos = (
  configDir: string,
  settings: Settings,
  settingsFile: SourceFile | undefined,
  offers: ReadonlyArray<{ readonly value: Offer; readonly file: SourceFile }>,
  problems: Array<ConfigurationProblem>
): ReadonlyMap<string, PageLogo> => {
  const logos = new Map<string, PageLogo>()
  const read = (path: string, report: (message: string) => void) => {
    if (logos.has(path)) return
    const logo = readLogo(configDir, path)
    if (typeof logo === "string") report(logo)
    else logos.set(path, logo)
  }
  const at = ["verification", "page", "logo"]
  const deployment = settings.verification.page?.logo
  if (deployment !== undefined) {
    read(deployment, (message) =>
      problems.push(settingsFile === undefined ? { path: at.join("."), message } : problemAt(settingsFile, at, message))
    )
  }
  for (const { value, file } of offers) {
    const logo = value.verification?.page?.logo
    if (logo !== undefined) read(logo, (message) => problems.push(problemAt(file, at, message)))
  }
  return logos
}
