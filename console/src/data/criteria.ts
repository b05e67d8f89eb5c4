/**
 * A target group's criteria in plain words, one line per criterion, as the
 * Target groups screen lists them: which institutions (types, countries by
 * name, regions, whom the host must serve, suffix rules), which domains and
 * host patterns are allowed or denied, and what the email policy refuses.
 * Defaults the API leaves out are read as the config format defines them
 * (`src/domain/TargetGroup.ts`).
 */
import type { Criteria } from "../apiTypes.ts"

export interface CriterionLine {
  readonly criterion: "institutions" | "domains" | "patterns" | "emailPolicy"
  readonly label: string
  readonly text: string
}

const regionNames = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" })

/** A country code with its English name, e.g. `United Kingdom (GB)`. */
export const countryName = (code: string): string => {
  try {
    const name = regionNames.of(code.toUpperCase())
    return name === undefined ? code : `${name} (${code})`
  } catch {
    return code
  }
}

/** `a`, `a and b`, `a, b and c`. */
export const listWords = (words: ReadonlyArray<string>): string =>
  words.length <= 1 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`

const plural: Record<string, string> = {
  university: "universities",
  college: "colleges",
  school: "schools",
  research: "research institutions",
  other: "other institutions"
}

const institutionsLine = (institutions: NonNullable<Criteria["institutions"]>): string => {
  const kinds = institutions.types?.length
    ? listWords(institutions.types.map((type) => plural[type] ?? type))
    : "any institution"
  const parts = [kinds[0]!.toUpperCase() + kinds.slice(1)]
  if (institutions.countries?.length) parts.push(`in ${listWords(institutions.countries.map(countryName))}`)
  if (institutions.regions?.length) parts.push(`in the regions ${listWords([...institutions.regions])}`)
  const roles = institutions.roles?.length ? [...institutions.roles] : ["student", "staff"]
  parts.push(`for hosts serving ${listWords(roles)}`)
  const suffixRules = institutions.includeSuffixRules ?? true
  return `${parts.join(" ")}; ${suffixRules ? "academic suffix rules (*.edu, *.ac.XX) count" : "listed institutions only (no suffix rules)"}.`
}

const listsLine = (
  what: string,
  lists: { readonly allow?: ReadonlyArray<string>; readonly deny?: ReadonlyArray<string> }
) => {
  const parts: Array<string> = []
  if (lists.allow?.length) parts.push(`allowed: ${lists.allow.join(", ")}`)
  if (lists.deny?.length) parts.push(`denied: ${lists.deny.join(", ")}`)
  return parts.length === 0 ? `No ${what}.` : `${parts.join("; ")} (the most specific entry wins).`
}

type PolicyFlag = keyof NonNullable<Criteria["email"]>

/** The policy flags, their default (`src/domain/TargetGroup.ts`) and what they mean when set. */
const POLICY: ReadonlyArray<readonly [PolicyFlag, boolean, string, "refuses" | "accepts"]> = [
  ["rejectDisposable", true, "disposable addresses", "refuses"],
  ["rejectRoleAccounts", false, "role accounts (info@, admin@)", "refuses"],
  ["rejectFreeMail", false, "free-mail providers", "refuses"],
  ["rejectAbused", true, "domains known for abuse", "refuses"],
  ["rejectConfusable", true, "look-alike (confusable) domains", "refuses"],
  ["allowQuotedLocalPart", false, "quoted local parts", "accepts"],
  ["allowIpLiteral", false, "IP-address domains", "accepts"],
  ["allowSpecialUseDomains", false, "special-use domains", "accepts"]
]

const policyLine = (email: Criteria["email"]): string => {
  const on = (flag: PolicyFlag, fallback: boolean) => email?.[flag] ?? fallback
  const refuses = POLICY.filter(([flag, fallback, , kind]) => kind === "refuses" && on(flag, fallback)).map(
    ([, , text]) => text
  )
  const accepts = POLICY.filter(([flag, fallback, , kind]) => kind === "accepts" && on(flag, fallback)).map(
    ([, , text]) => text
  )
  const parts = [refuses.length === 0 ? "Refuses nothing by policy" : `Refuses ${listWords(refuses)}`]
  if (accepts.length > 0) parts.push(`accepts ${listWords(accepts)}`)
  return `${parts.join("; ")}.`
}

export const describeCriteria = (criteria: Criteria): ReadonlyArray<CriterionLine> => {
  const lines: Array<CriterionLine> = []
  if (criteria.institutions !== undefined)
    lines.push({ criterion: "institutions", label: "Institutions", text: institutionsLine(criteria.institutions) })
  if (criteria.domains !== undefined)
    lines.push({ criterion: "domains", label: "Domains", text: listsLine("domain lists", criteria.domains) })
  if (criteria.patterns !== undefined)
    lines.push({ criterion: "patterns", label: "Host patterns", text: listsLine("host patterns", criteria.patterns) })
  lines.push({ criterion: "emailPolicy", label: "Email policy", text: policyLine(criteria.email) })
  return lines
}
