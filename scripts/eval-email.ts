/**
 * Measures how far `parseEmail` agrees with two public email test suites once their verdicts are
 * mapped to Campusgate's policy (docs/email-policy.md). Run: `node scripts/eval-email.ts`.
 *
 * Mapping:
 * - hapi-address: records with `options: null` use that library's defaults and are compared as
 *   they are. A `tlds` allow-list only ever removes addresses, so a `valid` verdict under it holds
 *   for the policy too, and an `invalid` one is kept when the suite gives an isemail diagnosis
 *   independent of the list (lengths); the rest rest on the list and are skipped.
 *   `minDomainSegments: 1` (dotless domains), `allowUnicode: false` and `ignoreLength: true`
 *   change behaviour against the policy and are skipped.
 * - isemail: VALID and DNSWARN are valid unless the domain has no dot; RFC5321 (quoted strings,
 *   address literals, dotless and numeric top-level domains), CFWS, DEPREC, RFC5322 and ERR are
 *   invalid.
 * - isemail+options: the same records with `allowQuotedLocalPart` and `allowIpLiteral`, under
 *   which the RFC5321 quoted-string and address-literal diagnoses become valid.
 * - Every suite: an address at a special-use or reserved name (`example.com`, `.test`, `.local`)
 *   is invalid under the policy, which refuses them by default (no one has a mailbox there).
 */
import { readFile } from "node:fs/promises"
import { type EmailSyntaxOptions, parseEmail } from "../src/engine/email/parseEmail.ts"
import { isSpecialUseDomain } from "../src/engine/email/specialUse.ts"

export interface EmailDisagreement {
  readonly input: string
  readonly expected: boolean
  readonly actual: boolean
  readonly reason?: string
}

export interface EmailSuiteResult {
  readonly name: string
  readonly total: number
  readonly agree: number
  readonly disagreements: EmailDisagreement[]
  /** Records left out because their verdict rests on options the policy does not share. */
  readonly skipped: number
}

interface HapiRecord {
  readonly input: string
  readonly expected: "valid" | "invalid"
  readonly options: Record<string, unknown> | null
  readonly skeggse_isemail_diagnosis: string | null
}

interface IsemailRecord {
  readonly input: string
  readonly expected: "valid" | "invalid"
  readonly category: string
  readonly diagnosis: string
}

const DATA_DIR = new URL("../../shared/eval/email/", import.meta.url)

const load = async <T>(file: string): Promise<T[]> => JSON.parse(await readFile(new URL(file, DATA_DIR), "utf8")) as T[]

/** The policy's verdict for a hapi-address record, or undefined to skip it. */
const mapHapi = (r: HapiRecord): boolean | undefined => {
  if (r.options === null) return r.expected === "valid"
  const keys = Object.keys(r.options)
  if (keys.length === 1 && keys[0] === "tlds") {
    if (r.expected === "valid") return true
    const diagnosis = r.skeggse_isemail_diagnosis
    return diagnosis !== null && diagnosis !== "valid" ? false : undefined
  }
  return undefined
}

const atSpecialUseDomain = (input: string): boolean =>
  isSpecialUseDomain(input.slice(input.lastIndexOf("@") + 1).toLowerCase())

const hasDotlessDomain = (input: string): boolean => !input.slice(input.lastIndexOf("@") + 1).includes(".")

/** The policy's verdict for an isemail record, with or without the two options. */
const mapIsemail = (r: IsemailRecord, withOptions: boolean): boolean => {
  switch (r.category) {
    case "ISEMAIL_VALID_CATEGORY":
    case "ISEMAIL_DNSWARN":
      return !hasDotlessDomain(r.input)
    case "ISEMAIL_RFC5321":
      return (
        withOptions &&
        (r.diagnosis === "ISEMAIL_RFC5321_QUOTEDSTRING" || r.diagnosis === "ISEMAIL_RFC5321_ADDRESSLITERAL")
      )
    default:
      return false
  }
}

const compare = <T extends { readonly input: string }>(
  name: string,
  records: readonly T[],
  map: (r: T) => boolean | undefined,
  options?: EmailSyntaxOptions
): EmailSuiteResult => {
  const disagreements: EmailDisagreement[] = []
  let total = 0
  let skipped = 0
  for (const r of records) {
    const mapped = map(r)
    const expected = mapped === true && atSpecialUseDomain(r.input) ? false : mapped
    if (expected === undefined) {
      skipped++
      continue
    }
    total++
    const result = parseEmail(r.input, options)
    if (result.ok !== expected) {
      disagreements.push(
        result.ok
          ? { input: r.input, expected, actual: true }
          : { input: r.input, expected, actual: false, reason: result.reason }
      )
    }
  }
  return { name, total, agree: total - disagreements.length, disagreements, skipped }
}

export async function evaluateEmailSuites(): Promise<{ suites: EmailSuiteResult[] }> {
  const [hapi, isemail] = await Promise.all([
    load<HapiRecord>("hapi-address.json"),
    load<IsemailRecord>("isemail.json")
  ])
  const both: EmailSyntaxOptions = { allowQuotedLocalPart: true, allowIpLiteral: true }
  return {
    suites: [
      compare("hapi-address", hapi, mapHapi),
      compare("isemail", isemail, (r) => mapIsemail(r, false)),
      compare("isemail+options", isemail, (r) => mapIsemail(r, true), both)
    ]
  }
}

/** JSON string with everything outside printable ASCII escaped, so any input prints safely. */
const escapeInput = (s: string): string =>
  JSON.stringify(s).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)

const ratio = (agree: number, total: number): number => (total === 0 ? 1 : Math.round((agree / total) * 1e4) / 1e4)

const main = async (): Promise<void> => {
  const { suites } = await evaluateEmailSuites()
  let total = 0
  let agree = 0
  for (const s of suites) {
    total += s.total
    agree += s.agree
    console.log(
      `${s.name}: ${s.agree}/${s.total} agree (${(ratio(s.agree, s.total) * 100).toFixed(2)}%), ${s.skipped} skipped`
    )
    for (const d of s.disagreements) {
      const verdict = d.actual ? "accepted" : `rejected ${d.reason ?? ""}`
      console.log(`  expected ${d.expected ? "valid" : "invalid"}, ${verdict}: ${escapeInput(d.input)}`)
    }
  }
  const summary = {
    suite: "email-syntax",
    agreement: ratio(agree, total),
    total,
    agree,
    suites: suites.map((s) => ({
      name: s.name,
      total: s.total,
      agree: s.agree,
      agreement: ratio(s.agree, s.total),
      skipped: s.skipped
    }))
  }
  console.log(JSON.stringify(summary))
}

if (import.meta.main) await main()
