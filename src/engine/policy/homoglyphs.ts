/**
 * Our table of characters drawn like an ASCII letter, digit or domain
 * punctuation in common fonts — the subset of Unicode's confusables that
 * attackers use in look-alike domains — and of marks too faint to tell apart.
 *
 * Applied after lower-casing and NFKD (`confusable.ts`), so full-width forms
 * (`ｍ`), mathematical letters (`𝐦`), ligatures (`ﬁ`) and most compatibility
 * characters already arrive as ASCII and need no entry here. Only lower-case
 * forms are listed: IDNA lower-cases every label.
 *
 * Deliberately absent: letters with a visible accent (`ü`, `é`, `ñ`), and
 * Cyrillic or Greek letters that merely resemble small capitals (`н`, `т`,
 * `к`, `м`): mapping them would make ordinary words in those scripts
 * "imitate" ASCII names.
 */

/** Pairs of look-alike → ASCII, grouped by script. */
const table: ReadonlyArray<readonly [lookAlikes: string, ascii: string]> = [
  // Cyrillic
  ["а", "a"],
  ["ԁ", "d"],
  ["е", "e"],
  ["һ", "h"],
  ["іӏ", "il"],
  ["ј", "j"],
  ["о", "o"],
  ["р", "p"],
  ["ԛ", "q"],
  ["с", "c"],
  ["ѕ", "s"],
  ["уү", "yy"],
  ["ѵ", "v"],
  ["ԝѡ", "ww"],
  ["х", "x"],
  // Greek
  ["α", "a"],
  ["ϲ", "c"],
  ["η", "n"],
  ["ι", "i"],
  ["ϳ", "j"],
  ["κ", "k"],
  ["ν", "v"],
  ["ο", "o"],
  ["ρ", "p"],
  ["τ", "t"],
  ["υ", "u"],
  ["ω", "w"],
  ["χ", "x"],
  ["γ", "y"],
  // Armenian
  ["ա", "w"],
  ["ց", "g"],
  ["հ", "h"],
  ["ո", "n"],
  ["օ", "o"],
  ["զ", "q"],
  ["ս", "u"],
  // Latin look-alikes: dotless and small-capital letters, IPA letters
  ["ɑ", "a"],
  ["ᴄ", "c"],
  ["ɡ", "g"],
  ["ıɩɪ", "iii"],
  ["ȷ", "j"],
  ["ĸ", "k"],
  ["ǀ", "l"],
  ["ᴏ", "o"],
  ["ꜱ", "s"],
  ["ᴜ", "u"],
  ["ᴠ", "v"],
  ["ᴡ", "w"],
  ["ᴢ", "z"],
  // Punctuation that IDNA or a renderer shows as a dot or hyphen
  ["。", "."],
  ["‐‒–−", "----"]
]

export const homoglyphs: ReadonlyMap<string, string> = new Map(
  table.flatMap(([lookAlikes, ascii]) => Array.from(lookAlikes, (char, i) => [char, ascii[i]!] as const))
)

/** Combining marks under a letter, drawn so small that `ạ` reads as `a` at text size. */
const faintMarksBelow = new Set([
  "\u0323", // dot below
  "\u0324", // diaeresis below
  "\u0325", // ring below
  "\u032d", // circumflex below
  "\u032e", // breve below
  "\u0330", // tilde below
  "\u0331" // macron below
])

/** Invisible characters (zero-width joiners, soft hyphen, variation selectors) draw nothing at all. */
const invisible = /^\p{Default_Ignorable_Code_Point}$/u

/** Whether `char` (after NFKD) can be dropped from the skeleton, given the character drawn before it. */
export const isFaintMark = (char: string, previous: string): boolean =>
  faintMarksBelow.has(char) ||
  // `i̇` (an `i` with a second dot above, e.g. from Turkish `İ`) is drawn as `i`; likewise `j̇`.
  (char === "\u0307" && (previous === "i" || previous === "j")) ||
  invisible.test(char)
