/**
 * Damerau–Levenshtein distance in its "optimal string alignment" form: the
 * fewest insertions, deletions, substitutions and swaps of adjacent
 * characters turning one string into another (no substring edited twice),
 * which is how single typing slips compose.
 *
 * Meant for short strings such as domain suffixes: quadratic time, and it
 * stops early once every alignment exceeds `max`.
 */

/** The distance between `a` and `b`, or `max + 1` as soon as it is known to exceed `max`. */
export const damerauDistance = (a: string, b: string, max: number = Number.POSITIVE_INFINITY): number => {
  if (Math.abs(a.length - b.length) > max) return max + 1
  const width = b.length + 1
  // Three rows of the dynamic-programming table: two rows back (for swaps), previous, current.
  let older = new Array<number>(width).fill(0)
  let previous = Array.from({ length: width }, (_, j) => j)
  let current = new Array<number>(width).fill(0)
  for (let i = 1; i <= a.length; i++) {
    current[0] = i
    let rowMin = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, older[j - 2]! + 1)
      current[j] = value
      if (value < rowMin) rowMin = value
    }
    if (rowMin > max) return max + 1
    ;[older, previous, current] = [previous, current, older]
  }
  const distance = previous[b.length]!
  return distance > max ? max + 1 : distance
}
