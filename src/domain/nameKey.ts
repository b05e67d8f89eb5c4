/**
 * Comparison keys for place names (countries, subdivisions).
 *
 * Two spellings that differ only in case, diacritics, punctuation, spacing,
 * "&" versus "and", "St." versus "Saint" or a leading "The" get the same key:
 * `"Côte d'Ivoire"`, `"COTE D IVOIRE"` and `"Cote-d'Ivoire"` all become
 * `"cotedivoire"`. Keys keep letters of every script, so non-Latin names never
 * collapse to the empty key. `nameVariants` adds the usual inversions
 * ("Korea, Republic of", "Bolivia (Plurinational State of)").
 */

/** Letters that Unicode decomposition leaves alone but readers treat as plain Latin. */
const extraFolds: Readonly<Record<string, string>> = {
  ı: "i",
  ø: "o",
  æ: "ae",
  œ: "oe",
  ß: "ss",
  đ: "d",
  ð: "d",
  ł: "l",
  þ: "th",
  ħ: "h",
  ŀ: "l"
}
const foldable = new RegExp(`[${Object.keys(extraFolds).join("")}]`, "g")
const combiningMarks = /\p{M}+/gu
const apostrophes = /['’‘ʻʼ`´]/g
const wordSeparators = /[^\p{L}\p{N}]+/u

/** Words that carry no meaning in a place name and are dropped. */
const droppedWords = new Set(["the"])
/** Words spelled in more than one way, mapped to one spelling. */
const wordSynonyms: Readonly<Record<string, string>> = { st: "saint", ste: "sainte" }

/** The words of a name, lower-case, without diacritics or punctuation. */
export const nameWords = (name: string): Array<string> =>
  name
    .normalize("NFKD")
    .replace(combiningMarks, "")
    .toLowerCase()
    .replace(foldable, (letter) => extraFolds[letter] ?? letter)
    .replace(/&/g, " and ")
    .replace(apostrophes, "")
    .split(wordSeparators)
    .filter((word) => word.length > 0 && !droppedWords.has(word))
    .map((word) => (Object.hasOwn(wordSynonyms, word) ? wordSynonyms[word]! : word))

/** The comparison key of one spelling: its words joined without separators. */
export const nameKey = (name: string): string => nameWords(name).join("")

/**
 * The spellings of a name: as written, then with a trailing ", X" or "(X)"
 * moved to the front ("Korea, Republic of" -> "Republic of Korea"). For a
 * lookup (`forLookup`), also the name without its parenthetical ("Holy See
 * (Vatican City State)" -> "Holy See"), tried last; indexes leave that form
 * out, since "Korea (the Republic of)" and "Korea (the Democratic People's
 * Republic of)" would both claim "Korea".
 */
export const nameVariants = (name: string, forLookup = false): Array<string> => {
  const variants = [name]
  const parenthetical = /^(.*?)\s*\(([^()]*)\)\s*$/.exec(name)
  if (parenthetical !== null) {
    const [, outer = "", inner = ""] = parenthetical
    variants.push(`${inner} ${outer}`)
    if (forLookup) variants.push(outer)
  } else {
    const comma = name.indexOf(",")
    if (comma > 0) variants.push(`${name.slice(comma + 1)} ${name.slice(0, comma)}`)
  }
  return variants
}

/** The keys of `nameVariants`, without empty keys and duplicates. */
export const nameKeyVariants = (name: string, forLookup = false): Array<string> => {
  const keys: Array<string> = []
  for (const variant of nameVariants(name, forLookup)) {
    const key = nameKey(variant)
    if (key.length > 0 && !keys.includes(key)) keys.push(key)
  }
  return keys
}
