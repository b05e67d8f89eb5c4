/**
 * Micro-benchmark of `parseEmail`: run `node scripts/bench-email.ts`.
 *
 * Generates 1,000,000 varied, realistic ASCII sign-up addresses (deterministic seed), parses them
 * all several times and prints the median rate (and the best pass, which is less sensitive to
 * other processes on a shared machine). A second, smaller set mixes in 2% internationalised
 * and 5% malformed addresses to show the cost of the slow and failure paths. The last line is JSON.
 */
import { parseEmail } from "../src/engine/email/parseEmail.ts"

const COUNT = 1_000_000
const ROUNDS = 7

/** Mulberry32: a small deterministic PRNG, so every run measures the same inputs. */
const random = (() => {
  let state = 0x5eed1234
  return (): number => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
})()
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!

const FIRST = ["anna", "ben", "chloe", "david", "emma", "felix", "giulia", "hannah", "ivan", "julia", "kenji", "lena"]
const FIRST_MORE = [
  "mohammed",
  "nora",
  "oliver",
  "priya",
  "quentin",
  "rosa",
  "sven",
  "thi",
  "ugo",
  "vera",
  "wei",
  "zoe"
]
const LAST = ["smith", "mueller", "garcia", "nguyen", "kowalski", "rossi", "dubois", "tanaka", "okafor", "jensen"]
const LAST_MORE = ["fernandes", "van-der-berg", "oconnor", "schmidt", "haddad", "lindqvist", "moreau", "silva"]
const DOMAINS = [
  "gmail.com",
  "outlook.com",
  "student.uni-heidelberg.de",
  "stud.tu-darmstadt.de",
  "ethz.ch",
  "student.ethz.ch",
  "mail.utoronto.ca",
  "cam.ac.uk",
  "ucl.ac.uk",
  "students.uu.nl",
  "berkeley.edu",
  "alumni.stanford.edu",
  "g.harvard.edu",
  "u.nus.edu",
  "student.unimelb.edu.au",
  "etu.univ-paris1.fr",
  "studenti.unimi.it",
  "alumnos.upm.es",
  "s.kyushu-u.ac.jp",
  "yahoo.co.jp",
  "web.de",
  "icloud.com",
  "protonmail.com",
  "campus.tu-berlin.de"
]
const FIRSTS = [...FIRST, ...FIRST_MORE]
const LASTS = [...LAST, ...LAST_MORE]
const capitalise = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1)

const asciiAddress = (): string => {
  const first = pick(FIRSTS)
  const last = pick(LASTS)
  const r = random()
  let local =
    r < 0.35
      ? `${first}.${last}`
      : r < 0.5
        ? `${first.charAt(0)}${last}`
        : r < 0.6
          ? `${first}_${last}`
          : r < 0.7
            ? `${last}.${first}`
            : r < 0.85
              ? `${first}${Math.floor(random() * 10_000)}`
              : `${first.charAt(0)}${last.charAt(0)}${Math.floor(random() * 1_000_000)}`
  if (random() < 0.1) local = local.split(".").map(capitalise).join(".")
  if (random() < 0.05) local += `+${pick(["news", "uni", "shop", "2024"])}`
  let domain = pick(DOMAINS)
  if (random() < 0.05) domain = domain.toUpperCase()
  return `${local}@${domain}`
}

const INTERNATIONAL = ["jürgen@uni-köln.de", "用户@例子.广告", "élève@école.fr", "a@xn--mller-kva.de", "søren@æble.dk"]
const MALFORMED = ["john.doe", "john..doe@x.com", "john@x", " john@x.com", "john@x..com", "a@b.123", "john doe@x.com"]

const mixedAddress = (): string => {
  const r = random()
  if (r < 0.02) return pick(INTERNATIONAL)
  if (r < 0.07) return pick(MALFORMED)
  return asciiAddress()
}

/** Median and best parses per second over `ROUNDS` passes (after one warm-up pass). */
const measure = (inputs: readonly string[]): { rate: number; best: number; valid: number } => {
  let valid = 0
  const rates: number[] = []
  for (let round = 0; round <= ROUNDS; round++) {
    valid = 0
    const start = process.hrtime.bigint()
    for (let i = 0; i < inputs.length; i++) if (parseEmail(inputs[i]!).ok) valid++
    const seconds = Number(process.hrtime.bigint() - start) / 1e9
    if (round > 0) rates.push(inputs.length / seconds)
  }
  rates.sort((a, b) => a - b)
  return { rate: Math.round(rates[Math.floor(rates.length / 2)]!), best: Math.round(rates.at(-1)!), valid }
}

/**
 * Round-trips the generated list through JSON so every address is a flat sequential string, as it
 * would be after `JSON.parse` of a request body, rather than a concatenation rope.
 */
const generate = (count: number, make: () => string): string[] =>
  JSON.parse(JSON.stringify(Array.from({ length: count }, make))) as string[]

const ascii = generate(COUNT, asciiAddress)
const mixed = generate(COUNT / 10, mixedAddress)
const asciiResult = measure(ascii)
const mixedResult = measure(mixed)
console.log(`ascii: ${(asciiResult.rate / 1e6).toFixed(2)}M parses/s, ${asciiResult.valid}/${ascii.length} valid`)
console.log(`mixed: ${(mixedResult.rate / 1e6).toFixed(2)}M parses/s, ${mixedResult.valid}/${mixed.length} valid`)
console.log(
  JSON.stringify({
    bench: "parseEmail",
    addresses: ascii.length,
    parsesPerSecond: asciiResult.rate,
    bestParsesPerSecond: asciiResult.best,
    nsPerParse: Math.round((1e9 / asciiResult.rate) * 10) / 10,
    validShare: asciiResult.valid / ascii.length,
    mixedAddresses: mixed.length,
    mixedParsesPerSecond: mixedResult.rate,
    node: process.version
  })
)
