/**
 * What the email syntax tests ask of `parseEmail`: the parsed address of an
 * input that must parse, or the reason an input is refused ("OK" when it
 * parses).
 */
import {
  type EmailFormatReason,
  type EmailSyntaxOptions,
  type ParsedEmail,
  parseEmail
} from "../../../src/engine/email/parseEmail.ts"

/** The parsed address; throws, naming the reason, when `input` does not parse. */
export const valid = (input: string, options?: EmailSyntaxOptions): ParsedEmail => {
  const result = parseEmail(input, options)
  if (!result.ok) throw new Error(`expected ${JSON.stringify(input)} to be valid, got ${result.reason}`)
  return result.email
}

/** Why `input` is refused, or "OK". */
export const reasonOf = (input: string, options?: EmailSyntaxOptions): EmailFormatReason | "OK" => {
  const result = parseEmail(input, options)
  return result.ok ? "OK" : result.reason
}
