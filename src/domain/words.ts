/**
 * Small rules of English for the sentences answers are made of. Imports
 * nothing, so the console's bundle may use it too.
 */

/** The indefinite article before `word`, as it is said: "an active", "a draft", "a university". */
export const indefinite = (word: string): "a" | "an" =>
  /^[aeiou]/i.test(word) && !/^(uni|use|usu|eu|one)/i.test(word) ? "an" : "a"

/** `word` with its indefinite article: "an active offer" from `withArticle("active") + " offer"`. */
export const withArticle = (word: string): string => `${indefinite(word)} ${word}`

/** `text` with its first letter upper-case, to start a sentence. */
export const capitalized = (text: string): string => text.charAt(0).toUpperCase() + text.slice(1)
