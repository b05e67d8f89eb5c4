/**
 * The plain shape of the validation bodies, recognised without the schema:
 * what nearly every client sends, and what the fast path
 * (`fastEndpoints.ts`) serves without decoding it through the contract's
 * schema, which took about a tenth of a 1,000-email request's time with the
 * Effect pipeline around it. Single validations answered 1.12-1.16x as many
 * requests a second once their bodies skipped it too (`npm run bench:http`
 * against the code before, 8 and 64 connections, medians of five rounds).
 * A body of this shape is one the contract's schema accepts, as the same
 * value (test/server/plainPayloads.test.ts checks it over generated
 * bodies); anything else is left to the schema, which stays the judge:
 * these return undefined, never a problem.
 *
 * Parsed JSON has no inherited enumerable keys, so `for in` sees exactly its
 * own; a key the contract does not declare makes a body not plain.
 */
import type { BulkProcessRequest } from "../api/offers.ts"
import {
  type BulkRequest,
  EMAIL_MAX_LENGTH,
  ID_MAX_LENGTH,
  type ValidateOfferRequest,
  type ValidateTargetGroupRequest
} from "../api/validation.ts"

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const isId = (value: unknown): value is string =>
  typeof value === "string" && value.length > 0 && value.length <= ID_MAX_LENGTH

/** An email no longer than the contract allows (the engine judges the rest). */
const isEmail = (value: unknown): value is string => typeof value === "string" && value.length <= EMAIL_MAX_LENGTH

/** A non-empty array of emails. */
const isEmails = (value: unknown): value is ReadonlyArray<string> => {
  if (!Array.isArray(value) || value.length === 0) return false
  for (let i = 0; i < value.length; i++) if (!isEmail(value[i])) return false
  return true
}

/** `{ email, targetGroupId, explain? }` with each field as the contract declares it. */
export const plainTargetGroupRequest = (input: unknown): typeof ValidateTargetGroupRequest.Type | undefined => {
  if (!isObject(input)) return undefined
  let required = 0
  for (const key in input) {
    const value = input[key]
    switch (key) {
      case "email":
        if (!isEmail(value)) return undefined
        required++
        break
      case "targetGroupId":
        if (!isId(value)) return undefined
        required++
        break
      case "explain":
        if (typeof value !== "boolean") return undefined
        break
      default:
        return undefined
    }
  }
  return required === 2 ? (input as typeof ValidateTargetGroupRequest.Type) : undefined
}

/** `{ email, offerId }`, exactly those two, each as the contract declares it. */
export const plainOfferRequest = (input: unknown): typeof ValidateOfferRequest.Type | undefined => {
  if (!isObject(input)) return undefined
  let fields = 0
  for (const key in input) {
    const value = input[key]
    if (key === "email" ? !isEmail(value) : key !== "offerId" || !isId(value)) return undefined
    fields++
  }
  return fields === 2 ? (input as typeof ValidateOfferRequest.Type) : undefined
}

/** `{ emails, targetGroupId?, offerId?, details?, reasonText? }` with each field as the contract declares it. */
export const plainBulkRequest = (input: unknown): BulkRequest | undefined => {
  if (!isObject(input)) return undefined
  for (const key in input) {
    const value = input[key]
    switch (key) {
      case "emails":
        if (!isEmails(value)) return undefined
        break
      case "targetGroupId":
      case "offerId":
        if (!isId(value)) return undefined
        break
      case "details":
      case "reasonText":
        if (typeof value !== "boolean") return undefined
        break
      default:
        return undefined
    }
  }
  return "emails" in input ? (input as BulkRequest) : undefined
}

/** `{ requests: [{ offerId, email }, ...] }`, at least one request, each with exactly those two strings. */
export const plainBulkProcessRequest = (input: unknown): BulkProcessRequest | undefined => {
  if (!isObject(input)) return undefined
  for (const key in input) if (key !== "requests") return undefined
  const requests = input.requests
  if (!Array.isArray(requests) || requests.length === 0) return undefined
  for (let i = 0; i < requests.length; i++) {
    const request: unknown = requests[i]
    if (!isObject(request)) return undefined
    let fields = 0
    for (const key in request) {
      if ((key !== "offerId" && key !== "email") || typeof request[key] !== "string") return undefined
      fields++
    }
    if (fields !== 2) return undefined
  }
  return input as BulkProcessRequest
}
