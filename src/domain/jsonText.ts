/**
 * Pieces of JSON text, exactly as `JSON.stringify` writes them, for the
 * writers of answers in bulk (`rowText.ts`).
 *
 * `jsonString`: most strings in an answer (addresses, domains, reason
 * sentences) hold nothing JSON escapes, and then their JSON is the string in
 * quotes: one scan decides, and `JSON.stringify` writes only the others.
 *
 * `TextMemo`: the JSON of values that repeat from row to row (a matched
 * target group's id), kept by the value, so a repeat costs a lookup instead
 * of a scan and a copy. Bounded: when full it starts over, so a stream of
 * values that never repeat costs no more memory than `max` entries. (Not for
 * reason sentences: most are made afresh for each email, and hashing a fresh
 * one to look it up costs more than its scan; see `rowText.ts`.)
 */

/**
 * What `JSON.stringify` writes escaped: control characters, `"`, `\`, and a
 * lone surrogate. Any surrogate sends a string to `JSON.stringify`, which
 * leaves a well-formed pair as it is.
 */
const NEEDS_ESCAPE = /[\u0000-\u001f"\\\ud800-\udfff]/

/** Whether `JSON.stringify(value)` escapes anything in the string: if not, its JSON is the string in quotes. */
export const needsEscape = (value: string): boolean => NEEDS_ESCAPE.test(value)

/** `JSON.stringify(value)` for a string. */
export const jsonString = (value: string): string => (NEEDS_ESCAPE.test(value) ? JSON.stringify(value) : `"${value}"`)

/**
 * `text`, made flat: a string built by `+` is a tree of its parts, which
 * every string it goes into has to walk again when written; a kept text is
 * made flat once, where it is kept. (`Number` reads the whole string, and V8
 * flattens a string to read it.) `npm run bench:rows` with the kept texts
 * left as built: 0.96-1.04x the former code's rows/s; made flat: 1.09-1.18x.
 */
export const flat = (text: string): string => {
  Number(text)
  return text
}

/** A string → text memo of at most `max` entries; `text` makes the text of a string not yet kept. */
export class TextMemo {
  readonly #texts = new Map<string, string>()
  readonly #max: number
  readonly #text: (value: string) => string

  constructor(max: number, text: (value: string) => string) {
    this.#max = max
    this.#text = text
  }

  get(value: string): string {
    let text = this.#texts.get(value)
    if (text === undefined) {
      text = flat(this.#text(value))
      if (this.#texts.size >= this.#max) this.#texts.clear()
      this.#texts.set(value, text)
    }
    return text
  }
}
