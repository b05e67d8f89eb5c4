/**
 * "Did you mean": the one candidate a mistyped word most likely stands for
 * (`rejectRoleAcounts` → `rejectRoleAccounts`, `activ` → `active`), or none
 * when no candidate is close enough to be a slip rather than another word.
 *
 * Close means a Damerau–Levenshtein distance, case ignored, of at most a
 * third of the candidate's length (at least 1): one slip in a short word,
 * two or three in a long key. A word that differs only in case always
 * matches (`Active` → `active`).
 */
import { damerauDistance } from "../engine/policy/editDistance.ts"

/** The candidate closest to `input`, if one is close enough; the first of equally close ones. */
export const closestMatch = (input: string, candidates: Iterable<string>): string | undefined => {
  const word = input.toLowerCase()
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const candidate of candidates) {
    if (candidate === input) continue
    const max = Math.max(1, Math.floor(candidate.length / 3))
    const distance = damerauDistance(word, candidate.toLowerCase(), max)
    if (distance <= max && distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/** ` (did you mean "x"?)` when a candidate is close, else the empty string: to append to a message. */
export const didYouMean = (input: string, candidates: Iterable<string>): string => {
  const match = closestMatch(input, candidates)
  return match === undefined ? "" : ` (did you mean "${match}"?)`
}
