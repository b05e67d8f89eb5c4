import { Buffer } from "node:buffer"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { canonicalAddress } from "../../../src/engine/email/canonical.ts"
import {
  EMAIL_FORMAT_REASONS,
  type EmailParse,
  type EmailSyntaxOptions,
  parseDomain,
  parseEmail
} from "../../../src/engine/email/parseEmail.ts"

const REASONS: ReadonlySet<string> = new Set(EMAIL_FORMAT_REASONS)

/** Any UTF-16 code unit, so lone surrogates appear too. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c))

/** Characters that matter to the grammar, in ASCII and beyond. */
const tricky = fc.constantFrom(
  ..."aZ09.-_+@ \t\r\n()[]\\\",:;<>!#$%&'*/=?^`{|}~".split(""),
  "\u0000",
  "\u007f",
  "\u0085",
  "\u00a0",
  "é",
  "ß",
  "\u0301",
  "\u200b",
  "\u200d",
  "\u3002",
  "\uff0e",
  "\ud800",
  "\udc00",
  "😆",
  "用",
  "xn--",
  "XN--"
)

const anyString = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: "binary", maxLength: 80 }),
  fc.string({ unit: codeUnit, maxLength: 80 }),
  fc.string({ unit: tricky, maxLength: 80 })
)

/** Strings that contain at least one @, so that both halves get exercised. */
const withAt = fc
  .tuple(anyString, anyString, fc.option(anyString, { nil: undefined }))
  .map(([a, b, c]) => (c === undefined ? `${a}@${b}` : `${a}@${b}@${c}`))

const options: fc.Arbitrary<EmailSyntaxOptions | undefined> = fc.option(
  fc.record({ allowQuotedLocalPart: fc.boolean(), allowIpLiteral: fc.boolean() }),
  { nil: undefined }
)

const isWellCoded = (result: EmailParse): boolean =>
  result.ok || (REASONS.has(result.reason) && typeof result.message === "string" && result.message.length > 0)

describe("parseEmail never throws and always answers with a documented code", () => {
  it("for arbitrary strings", () => {
    fc.assert(
      fc.property(anyString, options, (input, opts) => {
        expect(isWellCoded(parseEmail(input, opts))).toBe(true)
      }),
      { numRuns: 3000 }
    )
  })

  it("for arbitrary strings containing @", () => {
    fc.assert(
      fc.property(withAt, options, (input, opts) => {
        expect(isWellCoded(parseEmail(input, opts))).toBe(true)
      }),
      { numRuns: 3000 }
    )
  })

  it("for arbitrary non-string values", () => {
    fc.assert(
      fc.property(fc.anything(), (value) => {
        const result = parseEmail(value as string)
        expect(result.ok).toBe(false)
        expect(isWellCoded(result)).toBe(true)
      })
    )
  })

  it("parseDomain too", () => {
    fc.assert(
      fc.property(fc.oneof(anyString, fc.anything()), (input) => {
        const result = parseDomain(input as string)
        expect(result.ok || (REASONS.has(result.reason) && result.message.length > 0)).toBe(true)
      }),
      { numRuns: 2000 }
    )
  })
})

/** Inserts or overwrites single characters at arbitrary positions. */
const mutate = (base: fc.Arbitrary<string>, noise: fc.Arbitrary<string>, maxMutations: number): fc.Arbitrary<string> =>
  fc.tuple(base, fc.array(fc.tuple(fc.nat(), noise, fc.boolean()), { maxLength: maxMutations })).map(([text, edits]) =>
    edits.reduce((out, [at, char, overwrite]) => {
      const i = out.length === 0 ? 0 : at % (out.length + 1)
      return out.slice(0, i) + char + out.slice(overwrite ? i + 1 : i)
    }, text)
  )

/** Letters and digits, with an occasional inner hyphen or two. */
const ldhLabel = fc
  .tuple(
    fc.string({ unit: fc.constantFrom(..."abZ09".split("")), minLength: 1, maxLength: 6 }),
    fc.option(
      fc.tuple(
        fc.constantFrom("-", "--"),
        fc.string({ unit: fc.constantFrom(..."ab09".split("")), minLength: 1, maxLength: 4 })
      ),
      {
        nil: undefined
      }
    )
  )
  .map(([head, tail]) => (tail === undefined ? head : head + tail[0] + tail[1]))

/** Mostly valid addresses: dot-separated atoms, LDH or Unicode labels, some at the length limits. */
const atom = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.string({ unit: fc.constantFrom(..."abZ09!#$%&'*+/=?^_`{|}~-".split("")), minLength: 1, maxLength: 8 })
  },
  { weight: 1, arbitrary: fc.constantFrom("é", "用户", "ü", "é", "δ", "😆") },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 66 }).map((n) => "a".repeat(n)) }
)
const label = fc.oneof(
  { weight: 6, arbitrary: ldhLabel },
  { weight: 1, arbitrary: fc.constantFrom("müller", "例え", "xn--mller-kva", "XN--BCHER-KVA", "xn--zz", "123") },
  { weight: 1, arbitrary: fc.integer({ min: 55, max: 66 }).map((n) => "b".repeat(n)) }
)
const address = fc
  .tuple(fc.array(atom, { minLength: 1, maxLength: 3 }), fc.array(label, { minLength: 1, maxLength: 5 }))
  .map(([atoms, labels]) => `${atoms.join(".")}@${labels.join(".")}`)
const noise = fc.constantFrom(
  "",
  ".",
  "@",
  " ",
  "(",
  ")",
  '"',
  "[",
  "]",
  ",",
  "\\",
  "-",
  "_",
  "\u3002",
  "\u200b",
  "\u0000"
)
const nearValid = mutate(address, noise, 2)

describe("accepted addresses satisfy the policy's invariants", () => {
  it("normalised parts, limits and a stable round trip", () => {
    fc.assert(
      fc.property(fc.oneof(nearValid, withAt), options, (input, opts) => {
        const result = parseEmail(input, opts)
        if (!result.ok) return
        const email = result.email
        expect(email.address).toBe(`${email.localPart}@${email.domain}`)
        expect(email.domain).toMatch(/^[\x21-\x7e]+$/)
        expect(email.domain).toBe(email.isIpLiteral ? email.domain : email.domain.toLowerCase())
        expect(email.domain.endsWith(".")).toBe(false)
        expect(email.localPart).toBe(email.localPart.normalize("NFC"))
        expect(Buffer.byteLength(email.localPart, "utf8")).toBeLessThanOrEqual(64)
        expect(Buffer.byteLength(email.address, "utf8")).toBeLessThanOrEqual(254)
        if (!email.isInternational) expect(email.unicodeDomain).toBe(email.domain)
        // Parsing the normalised address, or its display form, gives the same address again.
        const again = parseEmail(email.address, opts)
        expect(again.ok && again.email.address).toBe(email.address)
        const display = parseEmail(`${email.localPart}@${email.unicodeDomain}`, opts)
        expect(display.ok && display.email.address).toBe(email.address)
      }),
      { numRuns: 3000 }
    )
  })

  it("canonical identities of plain addresses are valid and stable", () => {
    fc.assert(
      fc.property(nearValid, (input) => {
        const result = parseEmail(input)
        if (!result.ok) return
        const canonical = canonicalAddress(result.email)
        const reparsed = parseEmail(canonical)
        if (!reparsed.ok) return // e.g. "a.+b" loses its tag and ends with a dot; canonical forms are keys, not addresses
        expect(canonicalAddress(reparsed.email)).toBe(canonical)
      }),
      { numRuns: 2000 }
    )
  })
})

/**
 * An independent, regular-expression model of the policy for ASCII input without A-labels,
 * written from the policy text rather than from the implementation.
 */
const ATEXT = "[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]"
const DOT_ATOM = new RegExp(`^${ATEXT}+(?:\\.${ATEXT}+)*$`)
const LDH_LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/
/** A top-level label starts and ends with a letter (an A-label aside), and is no special-use name. */
const TLD_FORM = /^[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z])?$/
const SPECIAL_USE =
  /(^|\.)(test|example|invalid|localhost|local|onion|arpa|alt|internal|corp|home|mail|lan|intranet|private|localdomain|example\.(com|net|org|edu))$/i
const modelAccepts = (input: string): boolean | undefined => {
  const at = input.indexOf("@")
  if (at < 0 || input.indexOf("@", at + 1) >= 0) return false
  const local = input.slice(0, at)
  const domain = input.slice(at + 1)
  const labels = domain.split(".")
  if (labels.some((label) => /^xn--/i.test(label))) return undefined
  return (
    DOT_ATOM.test(local) &&
    local.length <= 64 &&
    input.length <= 254 &&
    domain.length <= 253 &&
    labels.length >= 2 &&
    labels.every((label) => LDH_LABEL.test(label)) &&
    TLD_FORM.test(labels.at(-1) ?? "") &&
    !SPECIAL_USE.test(domain)
  )
}

describe("agrees with a regular-expression model on ASCII input", () => {
  const asciiAtom = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.string({
        unit: fc.constantFrom(..."aZ09!#$%&'*+/=?^_`{|}~-".split("")),
        minLength: 1,
        maxLength: 8
      })
    },
    { weight: 1, arbitrary: fc.integer({ min: 55, max: 66 }).map((n) => "a".repeat(n)) }
  )
  const asciiLabel = fc.oneof(
    { weight: 6, arbitrary: ldhLabel },
    { weight: 1, arbitrary: fc.integer({ min: 55, max: 66 }).map((n) => "b".repeat(n)) }
  )
  const asciiAddress = fc
    .tuple(fc.array(asciiAtom, { minLength: 1, maxLength: 3 }), fc.array(asciiLabel, { minLength: 1, maxLength: 5 }))
    .map(([atoms, labels]) => `${atoms.join(".")}@${labels.join(".")}`)
  const asciiNoise = fc.constantFrom(...'..@ ()",:;<>[]\\-_\t'.split(""), "")
  const asciiInput = fc.oneof(
    { weight: 5, arbitrary: mutate(asciiAddress, asciiNoise, 2) },
    { weight: 1, arbitrary: fc.string({ unit: asciiNoise, maxLength: 20 }) }
  )

  it("accepts exactly what the model accepts", () => {
    fc.assert(
      fc.property(asciiInput, (input) => {
        const expected = modelAccepts(input)
        if (expected === undefined) return
        expect(parseEmail(input).ok).toBe(expected)
      }),
      { numRuns: 5000 }
    )
  })
})
