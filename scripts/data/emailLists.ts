/**
 * Compiles the email policy lists from open data on the npm registry (never
 * fetched at run time):
 * - `disposable-email-domains`: throwaway mail domains (`index.json`) and the
 *   domains whose every subdomain is throwaway (`wildcard.json`);
 * - `email-providers`: free mail providers (`all.json`) and the few hundred
 *   most common ones (`common.json`);
 * - `role-based-email-addresses`: local parts naming a role, not a person.
 *
 * Guarantees: every kept domain is lower-case ASCII (IDNs as `xn--`
 * punycode), has at least two labels of valid LDH syntax, and is not itself
 * an ICANN public suffix; every list is deduplicated and sorted, so the
 * output is byte-identical for the same package versions. What was dropped
 * is counted per list, never silently.
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { domainToASCII } from "node:url"
import { getPublicSuffix } from "tldts"
import {
  type EmailListData,
  type EmailListSource,
  type EmailListsData,
  emailListsDataFormat
} from "../../src/engine/policy/EmailListsData.ts"

const require = createRequire(import.meta.url)

const packageVersion = (name: string): string =>
  (JSON.parse(readFileSync(require.resolve(`${name}/package.json`), "utf8")) as { version: string }).version

const readJsonArray = (name: string, file: string): ReadonlyArray<unknown> => {
  const path = join(dirname(require.resolve(`${name}/package.json`)), file)
  const value: unknown = JSON.parse(readFileSync(path, "utf8"))
  if (!Array.isArray(value)) throw new Error(`${name}/${file}: expected a JSON array`)
  return value
}

/** RFC 1035 "LDH" labels (RFC 5890 for `xn--` A-labels), at least two of them, at most 253 characters. */
const asciiDomainPattern = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

type Verdict = { readonly kept: string } | { readonly dropped: "invalid" | "publicSuffix" }

const normalizeDomain = (entry: unknown): Verdict => {
  if (typeof entry !== "string") return { dropped: "invalid" }
  let domain = entry.trim().toLowerCase()
  if (domain.endsWith(".")) domain = domain.slice(0, -1)
  // IDNA (UTS #46) mapping and punycode; "" when the name cannot be a domain.
  domain = domainToASCII(domain)
  if (domain.length > 253 || !asciiDomainPattern.test(domain)) return { dropped: "invalid" }
  if (getPublicSuffix(domain) === domain) return { dropped: "publicSuffix" }
  return { kept: domain }
}

/** The characters of an unquoted local part (RFC 5322 dot-atom) except `+`, which starts a tag. */
const roleLocalPartPattern = /^[a-z0-9!#$%&'*/=?^_`{|}~.-]{1,64}$/

const normalizeLocalPart = (entry: unknown): Verdict => {
  if (typeof entry !== "string") return { dropped: "invalid" }
  const localPart = entry.trim().toLowerCase()
  return roleLocalPartPattern.test(localPart) ? { kept: localPart } : { dropped: "invalid" }
}

const compileList = (
  source: EmailListSource,
  entries: ReadonlyArray<unknown>,
  normalize: (entry: unknown) => Verdict
): EmailListData => {
  const kept = new Set<string>()
  let duplicate = 0
  let invalid = 0
  let publicSuffix = 0
  for (const entry of entries) {
    const verdict = normalize(entry)
    if ("dropped" in verdict) {
      if (verdict.dropped === "invalid") invalid++
      else publicSuffix++
    } else if (kept.has(verdict.kept)) duplicate++
    else kept.add(verdict.kept)
  }
  // Code-unit order (not locale order), so the output does not depend on the build machine.
  const sorted = [...kept].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  return {
    source,
    report: { read: entries.length, kept: sorted.length, duplicate, invalid, publicSuffix },
    entries: sorted.join("\n")
  }
}

const fromPackage = (name: string, file: string): EmailListSource => ({
  package: name,
  version: packageVersion(name),
  file
})

export function compileEmailLists(): EmailListsData {
  const disposable = "disposable-email-domains"
  const providers = "email-providers"
  const roles = "role-based-email-addresses"
  const roleList = require(roles) as unknown
  if (!Array.isArray(roleList)) throw new Error(`${roles}: expected the package to export an array`)
  return {
    format: emailListsDataFormat,
    lists: {
      disposable: compileList(
        fromPackage(disposable, "index.json"),
        readJsonArray(disposable, "index.json"),
        normalizeDomain
      ),
      disposableWildcard: compileList(
        fromPackage(disposable, "wildcard.json"),
        readJsonArray(disposable, "wildcard.json"),
        normalizeDomain
      ),
      freeMail: compileList(fromPackage(providers, "all.json"), readJsonArray(providers, "all.json"), normalizeDomain),
      commonMailProviders: compileList(
        fromPackage(providers, "common.json"),
        readJsonArray(providers, "common.json"),
        normalizeDomain
      ),
      roleAccounts: compileList(
        fromPackage(roles, "src/index.js"),
        roleList as ReadonlyArray<unknown>,
        normalizeLocalPart
      )
    }
  }
}
