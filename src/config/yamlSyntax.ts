/**
 * YAML syntax errors in plain words. The parser's messages speak its
 * grammar ("Implicit keys need to be on a single line", "Nested mappings
 * are not allowed in compact mappings"); a config author needs what is
 * wrong on that line and how to fix it. The position is the problem's
 * line and column, so it is not repeated here.
 *
 * Matched on the parser's error code, then on its message where one code
 * covers several mistakes; a mistake not known here gets its code's
 * general sentence, never the parser's text.
 */
import type { YAMLError } from "yaml"

type Rule = readonly [pattern: RegExp, message: string]

const byMessage: Partial<Record<YAMLError["code"], ReadonlyArray<Rule>>> = {
  BAD_INDENT: [
    [
      /^All mapping items must start at the same column/,
      "this key is not lined up with the keys above it: every key of a mapping starts in the same column"
    ],
    [
      /^All sequence items must start at the same column/,
      'this list item is not lined up with the items above it: every "- " of a list starts in the same column'
    ],
    [
      /^Flow sequence .* end with a \]/,
      'the list in brackets that starts here is not closed: add the "]" that ends it'
    ],
    [/^Flow mapping .* end with a \}/, 'the mapping in braces that starts here is not closed: add the "}" that ends it']
  ],
  MISSING_CHAR: [
    [/^Missing closing "quote/, 'the double-quoted value that starts here is not closed: add the closing "'],
    [/^Missing closing 'quote/, "the single-quoted value that starts here is not closed: add the closing '"],
    [
      /^Implicit map keys need to be followed by map values/,
      'a key has no value: write "key: value", with a colon and a space'
    ],
    [/^Missing , between .* items/, 'two items in brackets or braces need a "," between them'],
    [
      /^Missing , or : between .* items/,
      'items in brackets or braces need a "," between them (and "key: value" a colon)'
    ],
    [/^Missing space after :/, 'a ":" after a key needs a space after it'],
    [
      /^Comments must be separated/,
      'a "#" starts a comment only after a space; put the value in quotes if the "#" belongs to it'
    ],
    [/^Sequence item without - indicator/, 'a list item needs a "- " in front of it'],
    [/^Tags and anchors must be separated/, "an anchor (&name) or tag (!tag) needs a space after it"]
  ],
  UNEXPECTED_TOKEN: [
    [
      /^Unexpected block-seq-ind on same line with key/,
      'a list cannot start on the same line as its key: put each "- item" on a line of its own, indented below the key'
    ],
    [/^Unexpected , in /, 'an unexpected "," (two in a row, or one before the first item)'],
    [/^Unexpected empty item/, "an empty item between commas"],
    [/^Unexpected flow-map-end|^Unexpected \}/, 'a "}" that closes nothing'],
    [/^Unexpected flow-seq-end|^Unexpected \]/, 'a "]" that closes nothing'],
    [/^Unexpected (?:doc-end|doc-start)/, 'an unexpected document marker ("---" or "...")']
  ]
}

const byCode: Record<YAMLError["code"], string> = {
  ALIAS_PROPS: "an alias (*name) cannot have an anchor or a tag",
  BAD_ALIAS: "an anchor or alias name is empty or ends in a colon",
  BAD_DIRECTIVE: 'a line starting with "%" is read as a directive: put the value in quotes',
  BAD_DQ_ESCAPE:
    'a double-quoted value holds a backslash that is not a valid escape: write "\\\\" for a backslash, or use single quotes',
  BAD_INDENT: "the indentation is wrong here: nested keys and list items are indented further than their parent",
  BAD_PROP_ORDER: "an anchor (&name) or tag (!tag) is in the wrong place: put it right before the value",
  BAD_SCALAR_START: 'a value cannot start with this character (such as "@" or "`"): put it in quotes',
  BLOCK_AS_IMPLICIT_KEY:
    'a value holds ": " (a colon and a space), which starts another key: put the value in quotes, or move the nested mapping to its own lines',
  BLOCK_IN_FLOW: "a list or mapping written on several lines cannot be inside brackets or braces",
  DUPLICATE_KEY: "a key appears twice in the same mapping",
  IMPOSSIBLE: "the YAML cannot be read here",
  KEY_OVER_1024_CHARS: "a key is longer than 1024 characters, or a colon is missing after it",
  MISSING_CHAR: "a character is missing here (a closing quote or bracket, a colon or a comma)",
  MULTILINE_IMPLICIT_KEY:
    'a line that is neither "key: value" nor a list item: is the colon after the key missing, or a quoted value not closed?',
  MULTIPLE_ANCHORS: "a value can have only one anchor (&name)",
  MULTIPLE_DOCS: 'one resource per file: remove the second YAML document (after "---")',
  MULTIPLE_TAGS: "a value can have only one tag (!tag)",
  NON_STRING_KEY: "a key must be a plain word, not a list or mapping",
  RESOURCE_EXHAUSTION: "the file expands to too much data (too many aliases)",
  TAB_AS_INDENT: "a tab is used to indent: YAML indents with spaces only",
  TAG_RESOLVE_FAILED: "a tag (!tag) is not known: remove it, or put the value in quotes",
  UNEXPECTED_TOKEN: "unexpected text here: check the indentation, brackets and quotes around it",
  BAD_COLLECTION_TYPE: "a tag (!tag) does not fit the kind of value it is on"
}

/** The plain-words message for one of the parser's syntax errors. */
const plainSyntaxMessage = (error: Pick<YAMLError, "code" | "message">): string => {
  for (const [pattern, message] of byMessage[error.code] ?? []) if (pattern.test(error.message)) return message
  return byCode[error.code] ?? "the YAML syntax is not valid here"
}

/** What opens a value the parser found unclosed (it reports where it gave up, the end of the file or the next key). */
const openers: ReadonlyArray<readonly [RegExp, string, string | undefined]> = [
  [/^Missing closing "quote/, '"', undefined],
  [/^Missing closing 'quote/, "'", undefined],
  [/^Flow sequence/, "[", "]"],
  [/^Flow mapping/, "{", "}"]
]

/** The offset of the unmatched `open` before `offset`: the last one, or for brackets the last one not closed. */
const openerBefore = (text: string, offset: number, open: string, close: string | undefined): number | undefined => {
  let depth = 0
  for (let i = Math.min(offset, text.length) - 1; i >= 0; i--) {
    const char = text[i]
    if (close === undefined) {
      if (char === open && text[i - 1] !== "\\") return i
    } else if (char === close) depth++
    else if (char === open) {
      if (depth === 0) return i
      depth--
    }
  }
  return undefined
}

/**
 * One of the parser's syntax errors in plain words, and where to point: for
 * a quote or bracket never closed, where it opens rather than where the
 * parser gave up.
 */
export const explainSyntaxError = (
  error: Pick<YAMLError, "code" | "message" | "pos">,
  text: string
): { readonly message: string; readonly offset: number } => {
  const message = plainSyntaxMessage(error)
  const opener = openers.find(([pattern]) => pattern.test(error.message))
  const offset = opener === undefined ? undefined : openerBefore(text, error.pos[0], opener[1], opener[2])
  return { message, offset: offset ?? error.pos[0] }
}

/** The plain-words message for an error the parser raises while building values (an alias to no anchor). */
export const plainValueError = (message: string): string => {
  const alias = message.match(/^Unresolved alias.*?: \*?(.+)$/)
  if (alias !== null) return `the alias *${alias[1]} names no anchor (&${alias[1]}) defined before it`
  if (/alias/i.test(message)) return "the file uses aliases (*name) more than the 100 allowed"
  return "the YAML values cannot be built here"
}
