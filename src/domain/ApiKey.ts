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
  "institutions:review",
  "keys:read",
  "keys:write"
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

/** What a key is now: usable, past its expiry, or revoked (revoked wins over expired). */
export const ApiKeyStatus = Schema.Literals(["active", "expired", "revoked"])
export type ApiKeyStatus = typeof ApiKeyStatus.Type

/**
 * A key as its team is shown it (`GET /api/v1/keys`): the record without
 * its hash, absent times as null, and its status at the moment of asking.
 */
export const ApiKeyView = Schema.Struct({
  id: ApiKeyId,
  name: Schema.optionalKey(Schema.String),
  team: TeamId,
  scopes: Schema.Array(Scope),
  createdAt: Instant,
  expiresAt: Schema.NullOr(Instant),
  revokedAt: Schema.NullOr(Instant),
  status: ApiKeyStatus
}).annotate({ identifier: "ApiKey" })
export type ApiKeyView = typeof ApiKeyView.Type

/** The longest a key made through the API may live, in days (ten years). */
export const MAX_KEY_DAYS = 3650

/**
 * A key to make for the caller's team: its scopes (each one the caller's
 * own key holds), a label, and when it expires — in days or at an instant,
 * not both; neither: when the caller's key expires, or never.
 */
export const NewApiKeyRequest = Schema.Struct({
  name: Schema.optionalKey(
    Schema.String.pipe(
      Schema.check(
        Schema.isMinLength(1, { message: "a name is 1 to 100 characters" }),
        Schema.isMaxLength(100, { message: "a name is 1 to 100 characters" })
      )
    )
  ),
  scopes: Schema.Array(Scope).pipe(Schema.check(Schema.isMinLength(1, { message: "a key needs at least one scope" }))),
  expiresInDays: Schema.optionalKey(
    Schema.Int.pipe(
      Schema.check(
        Schema.isBetween(
          { minimum: 1, maximum: MAX_KEY_DAYS },
          { message: `expiresInDays is a whole number from 1 to ${MAX_KEY_DAYS}` }
        )
      )
    )
  ),
  expiresAt: Schema.optionalKey(Instant)
})
export type NewApiKeyRequest = typeof NewApiKeyRequest.Type

/** A key just made: its record as listed, and the key itself (`key`), shown this once. */
export const CreatedApiKeyView = Schema.Struct({
  ...ApiKeyView.fields,
  /** The secret: `cgk_` and 43 characters. Only its hash is stored; it is never shown again. */
  key: Schema.String
}).annotate({ identifier: "CreatedApiKey" })
export type CreatedApiKeyView = typeof CreatedApiKeyView.Type

/** Whether a key may be used at `now` (not revoked, not expired). */
export const isKeyActive = (key: Pick<ApiKeyRecord, "expiresAt" | "revokedAt">, now: number): boolean =>
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
