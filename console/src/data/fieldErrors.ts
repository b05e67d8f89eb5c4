/**
 * A refused write's field-level problems (`errors: [{ field, message }]`
 * of a 400, `field` a JSON pointer into the body: `/name`, `/country`) by
 * the form field they belong to, so a form can show each beside its field;
 * problems of fields the form does not have are listed apart.
 */
import type { Problem } from "../apiTypes.ts"

export interface FieldMessages {
  /** The messages of each of the form's fields, by field name. */
  readonly byField: Readonly<Record<string, string>>
  /** Problems of other fields, as `field: message`. */
  readonly other: ReadonlyArray<string>
}

/** The problem's field errors sorted onto `fields` (the top-level body fields the form has). */
export const fieldMessages = (problem: Problem | undefined, fields: ReadonlyArray<string>): FieldMessages => {
  const byField: Record<string, string> = {}
  const other: Array<string> = []
  for (const error of problem?.errors ?? []) {
    const message = error.message ?? "is not valid"
    const field = (error.field ?? "").replace(/^\//, "").split("/")[0] ?? ""
    if (fields.includes(field))
      byField[field] = byField[field] === undefined ? message : `${byField[field]}; ${message}`
    else other.push(field === "" ? message : `${field}: ${message}`)
  }
  return { byField, other }
}
