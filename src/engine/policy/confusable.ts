/**
 * Homograph detection for internationalised domains: does `mіt.edu` (with a
 * Cyrillic `і`) pass itself off as `mit.edu`?
 *
 * Two signals, after UTS #39 (Unicode Security Mechanisms):
 * - `mixedScript`: a label mixes scripts outside the combinations real
 *   writing uses (UTS #39 "highly restrictive": one script, or Latin with
 *   Han and Hiragana/Katakana, Bopomofo or Hangul). `mіt` mixes Latin and
 *   Cyrillic; `東京大学` and `müller` do not.
 * - `imitates`: the domain's *skeleton* — each character replaced by the
 *   ASCII letter it is drawn like (`homoglyphs.ts`), invisible characters and
 *   barely visible marks (dot below) removed — is an ASCII domain other than
 *   the domain itself. This also catches single-script fakes (`аррӏе.com`
 *   is all Cyrillic) while leaving legitimate IDNs alone: `müller.de` keeps
 *   its visible `ü`, and `уни.рф` keeps `н`, `и` and `ф`.
 *
 * Guarantees: never throws; a plain ASCII domain (no `xn--` label) is
 * answered from a constant without decoding anything; the Unicode property
 * regexes only run for IDNs, which are rare and off the hot path.
 */
import { domainToUnicode } from "node:url"
import { homoglyphs, isFaintMark } from "./homoglyphs.ts"

export interface ConfusableAssessment {
  /** Some label mixes scripts that no writing system combines. */
  readonly mixedScript: boolean
  /** The ASCII domain this IDN is drawn like, or `null`. */
  readonly imitates: string | null
  /** The scripts of the domain's letters, sorted (`["Cyrillic", "Latin"]`). */
  readonly scripts: ReadonlyArray<string>
}

const plainAscii: ConfusableAssessment = Object.freeze({
  mixedScript: false,
  imitates: null,
  scripts: Object.freeze(["Latin"])
})

const idnLabel = /(?:^|\.)xn--/i
const nonAscii = /[^\u0000-\u007f]/
const ldhDomain = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/

/** Scripts worth naming, most likely first; any other letter counts as "Other". */
const namedScripts = [
  "Latin",
  "Cyrillic",
  "Greek",
  "Han",
  "Hiragana",
  "Katakana",
  "Hangul",
  "Arabic",
  "Hebrew",
  "Armenian",
  "Georgian",
  "Thai",
  "Devanagari",
  "Bengali",
  "Tamil",
  "Telugu",
  "Kannada",
  "Malayalam",
  "Gujarati",
  "Gurmukhi",
  "Oriya",
  "Sinhala",
  "Lao",
  "Khmer",
  "Myanmar",
  "Tibetan",
  "Ethiopic",
  "Cherokee",
  "Mongolian",
  "Syriac",
  "Thaana",
  "Bopomofo",
  "Canadian_Aboriginal",
  "Coptic"
] as const
const scriptPatterns = namedScripts.map((name) => [name, new RegExp(`^\\p{Script=${name}}$`, "u")] as const)
/** Digits, hyphen, punctuation and combining marks belong to every script. */
const scriptNeutral = /^[\p{Script=Common}\p{Script=Inherited}]$/u

const scriptOf = (char: string): string | null => {
  if (scriptNeutral.test(char)) return null
  for (const [name, pattern] of scriptPatterns) if (pattern.test(char)) return name
  return "Other"
}

/** Script sets a single label may combine (UTS #39 §5.2 "highly restrictive"). */
const allowedCombinations: ReadonlyArray<ReadonlySet<string>> = [
  new Set(["Latin", "Han", "Hiragana", "Katakana"]),
  new Set(["Latin", "Han", "Bopomofo"]),
  new Set(["Latin", "Han", "Hangul"])
]

const isMixed = (labelScripts: ReadonlySet<string>): boolean => {
  if (labelScripts.size <= 1) return false
  return !allowedCombinations.some((allowed) => [...labelScripts].every((script) => allowed.has(script)))
}

/** The domain as it is drawn, in ASCII where a look-alike exists (UTS #39 skeleton, reduced to what domains need). */
export const skeleton = (unicodeDomain: string): string => {
  let out = ""
  let previous = ""
  // NFKD turns full-width and other compatibility forms into ASCII and splits accents from letters.
  for (const char of unicodeDomain.toLowerCase().normalize("NFKD")) {
    const lookAlike = homoglyphs.get(char)
    if (lookAlike !== undefined) {
      out += lookAlike
      previous = lookAlike
    } else if (isFaintMark(char, previous)) {
      // drawn on top of (or under) the previous letter without changing its outline
    } else {
      out += char
      previous = char
    }
  }
  return out
}

const withoutTrailingDot = (domain: string): string => (domain.endsWith(".") ? domain.slice(0, -1) : domain)

/** Recent assessments by ASCII domain (the Unicode form is derived from it); cleared when full. */
const remembered = new Map<string, ConfusableAssessment>()
const maxRemembered = 10_000

/**
 * Assesses a domain given in both forms, as the email parser has them. When
 * `unicodeDomain` holds no non-ASCII character (the caller only had the ASCII
 * form) it is decoded from `asciiDomain`. The result is frozen and may be shared.
 */
export const assessConfusable = (asciiDomain: string, unicodeDomain: string): ConfusableAssessment => {
  if (!idnLabel.test(asciiDomain)) return plainAscii
  let assessment = remembered.get(asciiDomain)
  if (assessment === undefined) {
    assessment = assess(asciiDomain, unicodeDomain)
    if (remembered.size >= maxRemembered) remembered.clear()
    remembered.set(asciiDomain, assessment)
  }
  return assessment
}

const assess = (asciiDomain: string, unicodeDomain: string): ConfusableAssessment => {
  const unicode = withoutTrailingDot(
    nonAscii.test(unicodeDomain) ? unicodeDomain : domainToUnicode(asciiDomain.toLowerCase())
  )

  const scripts = new Set<string>()
  let mixedScript = false
  for (const label of unicode.split(".")) {
    const labelScripts = new Set<string>()
    for (const char of label.normalize("NFC")) {
      const script = scriptOf(char)
      if (script !== null) labelScripts.add(script)
    }
    if (isMixed(labelScripts)) mixedScript = true
    for (const script of labelScripts) scripts.add(script)
  }

  const drawnAs = skeleton(unicode)
  const ascii = withoutTrailingDot(asciiDomain.toLowerCase())
  const imitates = drawnAs !== ascii && ldhDomain.test(drawnAs) ? drawnAs : null
  return Object.freeze({ mixedScript, imitates, scripts: Object.freeze([...scripts].sort()) })
}
