/**
 * Counts by name (ineligible validations by reason code, matches by target
 * group) as bars: the largest first, ties by name so the order is stable
 * between refreshes, each with its share of the total (the number shown)
 * and its length relative to the largest bar (the bar drawn).
 */

export interface Bar {
  readonly name: string
  readonly count: number
  /** count / total of all bars, 0..1. */
  readonly share: number
  /** count / the largest count, 0..1: the bar's drawn length. */
  readonly length: number
}

export const barsOf = (counts: Readonly<Record<string, number>>): ReadonlyArray<Bar> => {
  const entries = Object.entries(counts).filter(([, count]) => count > 0)
  const total = entries.reduce((sum, [, count]) => sum + count, 0)
  const largest = entries.reduce((max, [, count]) => Math.max(max, count), 0)
  return entries
    .sort(([nameA, countA], [nameB, countB]) => countB - countA || (nameA < nameB ? -1 : nameA > nameB ? 1 : 0))
    .map(([name, count]) => ({ name, count, share: count / total, length: count / largest }))
}
