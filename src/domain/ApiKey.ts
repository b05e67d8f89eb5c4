/**
 * API keys: who may call the daemon, for which team, with which scopes.
 * Only a key's hash is ever stored (`api-keys.yaml`); the key itself is
 * shown once, when it is created.
 */
import * as Schema from "effect/Schema"
import { TeamId } from "./Identifiers.ts"
import { Instant } from "./Offer.ts"

export const Scope = Schema.Literals([
  "validate:target-groups",
  "validate:offers",
  "validate:bulk",
  "jobs:read",
  "verifications:write",
  "verifications:read",
  "offers:read",
  "offers:write",
  "target-groups:read",
  "target-groups:write",
  "status:read",
  "institutions:review"
])
export type Scope = typeof Scope.Type
export const allScopes: ReadonlyArray<Scope> = Scope.literals

export const ApiKeyId = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(/^key_[a-z0-9]{8,32}$/, {
      message: 'a key id is "key_" followed by 8-32 lower-case letters or digits'
    })
  ),
  Schema.brand("ApiKeyId")
)
export type ApiKeyId = typeof ApiKeyId.Type

/** `sha256:` and the hex SHA-256 of the whole key. */
export const KeyHash = Schema.String.pipe(
  Schema.check(Schema.isPattern(/^sha256:[0-9a-f]{64}$/, { message: 'a key hash is "sha256:" and 64 hex digits' }))
)

export const ApiKeyRecord = Schema.Struct({
  id: ApiKeyId,
  name: Schema.optionalKey(Schema.String),
  team: TeamId,
  scopes: Schema.Array(Scope).pipe(Schema.check(Schema.isMinLength(1, { message: "a key needs at least one scope" }))),
  hash: KeyHash,
  createdAt: Instant,
  expiresAt: Schema.optionalKey(Instant),
  revokedAt: Schema.optionalKey(Instant)
})
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/** The content of an `api-keys.yaml` file. */
export const ApiKeysFile = Schema.Struct({
  keys: Schema.Array(ApiKeyRecord)
})
export type ApiKeysFile = typeof ApiKeysFile.Type

/** Whether a key may be used at `now` (not revoked, not expired). */
export const isKeyActive = (key: ApiKeyRecord, now: number): boolean =>
  key.revokedAt === undefined && (key.expiresAt === undefined || now < Date.parse(key.expiresAt))

/** A key expiring within this many days is pointed out to its team's operators (`GET /api/v1/status`). */
export const KEY_EXPIRY_WARNING_DAYS = 14

/** The team's keys that still work at `now` and expire within `KEY_EXPIRY_WARNING_DAYS`, soonest first. */
export const keysExpiringSoon = (
  keys: ReadonlyArray<ApiKeyRecord>,
  team: string,
  now: number
): Array<ApiKeyRecord & { readonly expiresAt: string }> =>
  keys
    .filter(
      (key): key is ApiKeyRecord & { readonly expiresAt: string } =>
        key.team === team &&
        key.expiresAt !== undefined &&
        isKeyActive(key, now) &&
        Date.parse(key.expiresAt) - now <= KEY_EXPIRY_WARNING_DAYS * 86_400_000
    )
    .sort((a, b) => Date.parse(a.expiresAt) - Date.parse(b.expiresAt))
