/**
 * JSON Merge Patch (RFC 7396): how a PATCH body changes a resource. An
 * object in the patch is merged member by member into the target (a member
 * set to `null` is removed); anything else — a string, a number, an array,
 * `true` — replaces the target's value whole. A patch that is not an object
 * replaces the whole target. The result is a new value: the target is not
 * touched.
 */

/** A JSON object as merge patches read it. */
export type JsonObject = { readonly [key: string]: unknown }

export const isJsonObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** `target` with `patch` applied (RFC 7396, section 2). */
export const applyMergePatch = (target: unknown, patch: unknown): unknown => {
  if (!isJsonObject(patch)) return patch
  const result: Record<string, unknown> = isJsonObject(target) ? { ...target } : {}
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key]
    else result[key] = applyMergePatch(result[key], value)
  }
  return result
}
