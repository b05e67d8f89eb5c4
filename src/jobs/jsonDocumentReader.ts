/**
 * The JSON form of a job upload, `{ emails: [...], targetGroupId | offerId,
 * callbackUrl? }`, read as it arrives: the document is scanned character by
 * character, each element of `emails` is cut out and parsed alone and
 * becomes an item at once, so memory stays constant whatever the number of
 * emails (as for NDJSON and CSV). The other fields are small values, kept
 * and decoded with Schema at the end (`jobDocument.ts`).
 *
 * Rules: the document is one JSON object; a key may appear once; an element
 * of `emails` is at most `MAX_ELEMENT_CHARS` long and another field's value
 * at most `MAX_FIELD_CHARS` (longer is a field error, not a stall). Syntax
 * errors are `MALFORMED_JSON` with the character position.
 */

import { addValue, type InputItems } from "./inputItems.ts"
import { decodeJobFields, type JobInputFields } from "./jobDocument.ts"
import { type InputFieldError, invalidDocument, type JobInputError, malformedJson } from "./jobInputError.ts"

/** The longest element of `emails` read (an email is at most 1024 characters; objects may carry more). */
export const MAX_ELEMENT_CHARS = 64 * 1024
/** The longest value of another field. */
export const MAX_FIELD_CHARS = 16 * 1024

/** Where the scan is in the document. */
const State = {
  BeforeObject: 0,
  FirstKeyOrEnd: 1,
  Key: 2,
  Colon: 3,
  Value: 4,
  FirstElementOrEnd: 5,
  Element: 6,
  AfterElement: 7,
  AfterValue: 8,
  Done: 9
} as const
type State = (typeof State)[keyof typeof State]

/** A value being cut out of the text: a string, a nested object or array, or a scalar. */
interface Capture {
  readonly kind: "string" | "nested" | "scalar"
  text: string
  depth: number
  inString: boolean
  escaped: boolean
  readonly max: number
  readonly field: string
}

const isSpace = (code: number) => code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09
const isScalarEnd = (code: number) => code === 0x2c || code === 0x5d || code === 0x7d || isSpace(code)

export class JsonDocumentReader {
  private readonly items: InputItems
  private state: State = State.BeforeObject
  private capture: Capture | undefined
  /** Characters consumed before the current text, for error positions. */
  private offset = 0
  private key = ""
  /** The capture is a property name. */
  private readingKey = false
  private readonly seen = new Set<string>()
  private readonly fields: Record<string, unknown> = {}
  private readonly errors: Array<InputFieldError> = []
  private emailsIndex = 0
  private failure: JobInputError | undefined

  constructor(items: InputItems) {
    this.items = items
  }

  /** Reads the next piece of the document; answers the failure that ends the upload, if any. */
  push(text: string): JobInputError | undefined {
    if (this.failure !== undefined) return this.failure
    let i = 0
    const n = text.length
    while (i < n && this.failure === undefined) {
      if (this.capture !== undefined) {
        i = this.continueCapture(text, i)
        continue
      }
      const code = text.charCodeAt(i)
      if (isSpace(code)) {
        i++
        continue
      }
      i = this.token(code, i)
    }
    this.offset += n
    return this.failure
  }

  /** The end of the document: its other fields, or what is wrong with it. */
  end(): JobInputFields | JobInputError {
    if (this.failure !== undefined) return this.failure
    if (this.capture?.kind === "scalar") this.finishCapture()
    if (this.failure !== undefined) return this.failure
    if (this.state !== State.Done) return malformedJson("The JSON document ends early.")
    if (!this.seen.has("emails"))
      this.errors.unshift({ field: "/emails", code: "REQUIRED", message: "this field is required" })
    const decoded = decodeJobFields(this.fields)
    const errors = [...this.errors, ...(Array.isArray(decoded) ? decoded : [])]
    if (errors.length > 0) return invalidDocument(errors)
    return decoded as JobInputFields
  }

  /** Acts on a structural character in `state`; answers where to go on. */
  private token(code: number, i: number): number {
    switch (this.state) {
      case State.BeforeObject:
        if (code === 0x7b) {
          this.state = State.FirstKeyOrEnd
          return i + 1
        }
        this.failure = invalidDocument([{ field: "/", code: "INVALID_TYPE", message: "Expected object" }])
        return i + 1
      case State.FirstKeyOrEnd:
        if (code === 0x7d) {
          this.state = State.Done
          return i + 1
        }
        return this.startKey(code, i)
      case State.Key:
        return this.startKey(code, i)
      case State.Colon:
        if (code !== 0x3a) return this.fail(i, "expected ':'")
        this.state = State.Value
        return i + 1
      case State.Value:
        if (this.key === "emails" && code === 0x5b) {
          this.state = State.FirstElementOrEnd
          return i + 1
        }
        return this.startCapture(code, i, MAX_FIELD_CHARS, this.key)
      case State.FirstElementOrEnd:
        if (code === 0x5d) {
          this.state = State.AfterValue
          return i + 1
        }
        return this.startCapture(code, i, MAX_ELEMENT_CHARS, "")
      case State.Element:
        return this.startCapture(code, i, MAX_ELEMENT_CHARS, "")
      case State.AfterElement:
        return this.afterItem(
          code,
          i,
          State.Element,
          0x5d,
          State.AfterValue,
          "expected ',' or ']' after an element of emails"
        )
      case State.AfterValue:
        return this.afterItem(code, i, State.Key, 0x7d, State.Done, "expected ',' or '}' after a value")
      case State.Done:
        return this.fail(i, "unexpected text after the JSON document")
    }
  }

  /** After an element or a member: a comma goes on to `next`, the closing bracket `close` to `closed`. */
  private afterItem(code: number, i: number, next: State, close: number, closed: State, what: string): number {
    if (code === 0x2c) this.state = next
    else if (code === close) this.state = closed
    else return this.fail(i, what)
    return i + 1
  }

  private startKey(code: number, i: number): number {
    if (code !== 0x22) return this.fail(i, "expected a property name in double quotes")
    this.capture = {
      kind: "string",
      text: "",
      depth: 0,
      inString: true,
      escaped: false,
      max: MAX_FIELD_CHARS,
      field: ""
    }
    this.readingKey = true
    return i
  }

  private startCapture(code: number, i: number, max: number, field: string): number {
    const kind = code === 0x22 ? "string" : code === 0x7b || code === 0x5b ? "nested" : "scalar"
    this.capture = { kind, text: "", depth: 0, inString: false, escaped: false, max, field }
    return i
  }

  /** Cuts the captured value further out of `text` from `i`; answers where it stopped. */
  private continueCapture(text: string, start: number): number {
    const capture = this.capture!
    let i = start
    const n = text.length
    let done = false
    if (capture.kind === "scalar") {
      while (i < n && !isScalarEnd(text.charCodeAt(i))) i++
      done = i < n
    } else if (capture.kind === "string") {
      // The opening quote: `depth` marks it as read.
      if (capture.depth === 0) {
        i++
        capture.depth = 1
      }
      while (i < n) {
        const code = text.charCodeAt(i++)
        if (capture.escaped) capture.escaped = false
        else if (code === 0x5c) capture.escaped = true
        else if (code === 0x22) {
          done = true
          break
        }
      }
    } else {
      while (i < n) {
        const code = text.charCodeAt(i++)
        if (capture.inString) {
          if (capture.escaped) capture.escaped = false
          else if (code === 0x5c) capture.escaped = true
          else if (code === 0x22) capture.inString = false
        } else if (code === 0x22) capture.inString = true
        else if (code === 0x7b || code === 0x5b) capture.depth++
        else if (code === 0x7d || code === 0x5d) {
          if (--capture.depth === 0) {
            done = true
            break
          }
        }
      }
    }
    capture.text += text.slice(start, i)
    if (capture.text.length > capture.max) {
      this.tooLong(capture)
      return n
    }
    if (done) this.finishCapture()
    return i
  }

  private tooLong(capture: Capture): void {
    const field = this.readingKey ? "/" : capture.field === "" ? `/emails/${this.emailsIndex}` : `/${capture.field}`
    this.failure = invalidDocument([{ field, code: "TOO_LONG", message: `longer than ${capture.max} characters` }])
  }

  /** A whole value was cut out: parse it and put it where it belongs. */
  private finishCapture(): void {
    const capture = this.capture!
    this.capture = undefined
    let value: unknown
    try {
      value = JSON.parse(capture.text)
    } catch (error) {
      this.failure = malformedJson(error instanceof Error ? error.message : String(error))
      return
    }
    if (this.readingKey) {
      this.readingKey = false
      const key = value as string
      if (this.seen.has(key)) {
        this.failure = invalidDocument([{ field: `/${key}`, code: "DUPLICATE", message: "this field appears twice" }])
        return
      }
      this.seen.add(key)
      this.key = key
      this.state = State.Colon
      return
    }
    if (this.state === State.FirstElementOrEnd || this.state === State.Element) {
      addValue(this.items, value, () => JSON.stringify(value))
      this.emailsIndex++
      this.state = State.AfterElement
      return
    }
    if (this.key === "emails") {
      this.errors.push({ field: "/emails", code: "INVALID_TYPE", message: `Expected array, got ${describe(value)}` })
    } else this.fields[this.key] = value
    this.state = State.AfterValue
  }

  private fail(i: number, what: string): number {
    this.failure = malformedJson(`${what} at position ${this.offset + i}`)
    return i + 1
  }
}

const describe = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "array"
      : typeof value === "string"
        ? JSON.stringify(value)
        : typeof value
