/**
 * What a change to an API resource is, as plain functions: its version (a
 * hash of its document, the `ETag` a read answers and `If-Match` names) and
 * the resource a JSON merge patch (RFC 7396) makes of it — the patch
 * applied to the resource's document as the API writes it, the server-set
 * fields ignored, then decoded as a new resource would be, with `id` and
 * `team` fixed. `Resources.ts` applies them under its one-at-a-time rule.
 */
import { createHash } from "node:crypto"
import * as Exit from "effect/Exit"
import * as Schema from "effect/Schema"
import type { FieldError } from "../domain/errors.ts"
import { fieldErrorsOf } from "../domain/fieldErrors.ts"
import { applyMergePatch, isJsonObject, type JsonObject } from "../domain/mergePatch.ts"
import { Offer } from "../domain/Offer.ts"
import { TargetGroup } from "../domain/TargetGroup.ts"
import type { ResourceKind } from "../resources/ResourceStore.ts"
import { InvalidResource } from "./ResourcesError.ts"

const encodeTargetGroup = Schema.encodeSync(TargetGroup)
const encodeOffer = Schema.encodeSync(Offer)
const decodeOptions = { onExcessProperty: "error", errors: "all" } as const
const decodeTargetGroup = Schema.decodeUnknownExit(TargetGroup, decodeOptions)
const decodeOffer = Schema.decodeUnknownExit(Offer, decodeOptions)

/**
 * A resource's version: a hash of its document as the API writes it, so it
 * changes exactly when what a read answers (other than the server-set
 * fields) changes. Stable across restarts and daemons.
 */
export const versionOf = (kind: ResourceKind, resource: TargetGroup | Offer): string => {
  const encoded = kind === "targetGroup" ? encodeTargetGroup(resource as TargetGroup) : encodeOffer(resource as Offer)
  return createHash("sha256").update(JSON.stringify(encoded)).digest("base64url").slice(0, 22)
}

/** Fields a client may send back from a read that the server sets itself; a patch's values for them are ignored. */
const SERVER_SET: Record<ResourceKind, ReadonlyArray<string>> = {
  targetGroup: ["source"],
  offer: ["source", "effectiveStatus"]
}

const patched = <A extends { readonly id: string }>(
  kind: ResourceKind,
  team: string,
  current: A,
  patch: JsonObject,
  decode: (input: unknown) => Exit.Exit<A, Schema.SchemaError>,
  encode: (resource: A) => unknown
): A | InvalidResource => {
  const ignored = Object.fromEntries(SERVER_SET[kind].map((field) => [field, null]))
  const document = applyMergePatch(encode(current), { ...patch, ...ignored })
  const errors: Array<FieldError> = []
  if (isJsonObject(document)) {
    if (document.id !== current.id) {
      errors.push({ field: "/id", code: "IMMUTABLE", message: `the id cannot change; it is "${current.id}"` })
    }
    if (document.team !== team) {
      errors.push({ field: "/team", code: "IMMUTABLE", message: `the team cannot change; it is "${team}"` })
    }
  }
  const decoded = decode(document)
  if (Exit.isFailure(decoded)) {
    const failure = decoded.cause.reasons.find((reason) => reason._tag === "Fail")
    if (failure !== undefined) errors.push(...fieldErrorsOf(failure.error))
  }
  if (errors.length > 0 || Exit.isFailure(decoded)) {
    const what = kind === "targetGroup" ? "target group" : "offer"
    return new InvalidResource({ detail: `The changed ${what} is not valid.`, errors })
  }
  return decoded.value
}

/** The target group `patch` makes of `current` (a group of `team`), or why it is not valid. */
export const patchedTargetGroup = (team: string, current: TargetGroup, patch: JsonObject) =>
  patched("targetGroup", team, current, patch, decodeTargetGroup, encodeTargetGroup)

/** The offer `patch` makes of `current` (an offer of `team`), or why it is not valid; its lifecycle is checked apart. */
export const patchedOffer = (team: string, current: Offer, patch: JsonObject) =>
  patched("offer", team, current, patch, decodeOffer, encodeOffer)
