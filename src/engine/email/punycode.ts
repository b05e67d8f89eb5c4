/**
 * A strict Punycode decoder (RFC 3492 section 6.2), used to check `xn--` labels. Node's
 * `domainToUnicode` leaves undecodable labels unchanged without saying so, and `node:punycode`
 * is deprecated, hence this small implementation.
 */

const BASE = 36
const T_MIN = 1
const T_MAX = 26
const SKEW = 38
const DAMP = 700
const INITIAL_BIAS = 72
const INITIAL_N = 0x80
const MAX_INT = 0x7fffffff

const adapt = (delta: number, points: number, first: boolean): number => {
  let d = first ? Math.floor(delta / DAMP) : delta >> 1
  d += Math.floor(d / points)
  let k = 0
  while (d > ((BASE - T_MIN) * T_MAX) >> 1) {
    d = Math.floor(d / (BASE - T_MIN))
    k += BASE
  }
  return k + Math.floor(((BASE - T_MIN + 1) * d) / (d + SKEW))
}

/** The value of one Punycode digit, or -1: `a`-`z` (either case) are 0-25, `0`-`9` are 26-35. */
const digitValue = (c: number): number => {
  if (c >= 0x61 && c <= 0x7a) return c - 0x61
  if (c >= 0x41 && c <= 0x5a) return c - 0x41
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 26
  return -1
}

/**
 * Decodes the part of an A-label after `xn--`. Returns `undefined` for anything that is not
 * well-formed Punycode: bad digits, a truncated number, overflow, or a result outside Unicode
 * scalar values.
 */
export const decodePunycode = (input: string): string | undefined => {
  const output: number[] = []
  const delimiter = input.lastIndexOf("-")
  for (let j = 0; j < delimiter; j++) {
    const c = input.charCodeAt(j)
    if (c >= 0x80) return undefined
    output.push(c)
  }
  let n = INITIAL_N
  let i = 0
  let bias = INITIAL_BIAS
  let pos = delimiter > 0 ? delimiter + 1 : 0
  while (pos < input.length) {
    const oldI = i
    let w = 1
    for (let k = BASE; ; k += BASE) {
      if (pos >= input.length) return undefined
      const digit = digitValue(input.charCodeAt(pos++))
      if (digit < 0) return undefined
      if (digit > Math.floor((MAX_INT - i) / w)) return undefined
      i += digit * w
      const t = k <= bias ? T_MIN : k >= bias + T_MAX ? T_MAX : k - bias
      if (digit < t) break
      if (w > Math.floor(MAX_INT / (BASE - t))) return undefined
      w *= BASE - t
    }
    const count = output.length + 1
    bias = adapt(i - oldI, count, oldI === 0)
    if (Math.floor(i / count) > MAX_INT - n) return undefined
    n += Math.floor(i / count)
    i %= count
    if (n > 0x10ffff || (n >= 0xd800 && n <= 0xdfff)) return undefined
    output.splice(i, 0, n)
    i++
  }
  return String.fromCodePoint(...output)
}
