/**
 * Why a key could not be made, listed or revoked (`Keys.ts`): each reason a
 * tagged error, `KeysError` the one a transport answers (the HTTP API's
 * problems in `server/problemOf.ts`, the CLI's messages).
 */
import * as Schema from "effect/Schema"
import { FieldError } from "../domain/errors.ts"

export class InvalidApiKeyRequest extends Schema.TaggedError<InvalidApiKeyRequest>()("InvalidApiKeyRequest", {
  reason: Schema.String
}) {
  override get message(): string {
    return `Cannot create the API key: ${this.reason}`
  }
}

/** A key to make through the API is not valid (a past expiry, both expiry forms, one outliving its maker). */
export class InvalidKeyRequest extends Schema.TaggedError<InvalidKeyRequest>()("InvalidKeyRequest", {
  detail: Schema.String,
  errors: Schema.Array(FieldError)
}) {
  override get message(): string {
    return this.detail
  }
}

/** The scopes a new key asks for that the key making it does not hold. */
export class ScopesNotHeld extends Schema.TaggedError<ScopesNotHeld>()("ScopesNotHeld", {
  missing: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `This API key cannot make a key with scopes it does not hold itself: ${this.missing.join(", ")}.`
  }
}

/** No key of the caller's team has this id (another team's key is not found either: its existence is not told). */
export class KeyNotFound extends Schema.TaggedError<KeyNotFound>()("KeyNotFound", { id: Schema.String }) {
  override get message(): string {
    return `There is no API key "${this.id}".`
  }
}

export class KeyAlreadyRevoked extends Schema.TaggedError<KeyAlreadyRevoked>()("KeyAlreadyRevoked", {
  id: Schema.String,
  revokedAt: Schema.String
}) {
  override get message(): string {
    return `The API key "${this.id}" was already revoked${this.revokedAt === "" ? "" : ` at ${this.revokedAt}`}.`
  }
}

/** A key defined in the config directory's file, which this process cannot write. */
export class KeyInConfigDirectory extends Schema.TaggedError<KeyInConfigDirectory>()("KeyInConfigDirectory", {
  id: Schema.String
}) {
  override get message(): string {
    return `The API key "${this.id}" is defined in the config directory's api-keys.yaml, which this daemon cannot write: set its revokedAt there, in git.`
  }
}

export class InvalidKeyCursor extends Schema.TaggedError<InvalidKeyCursor>()("InvalidKeyCursor", {}) {
  override get message(): string {
    return "The cursor is not valid."
  }
}

/** The change could not be made to serve (the store holds a broken file, the reload was rejected); `detail` says what stands. */
export class KeyChangeNotApplied extends Schema.TaggedError<KeyChangeNotApplied>()("KeyChangeNotApplied", {
  detail: Schema.String,
  problems: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `${this.detail}${this.problems.length === 0 ? "" : ` ${this.problems.join("; ")}`}`
  }
}

/** The key store cannot be read or written now; nothing was changed. */
export class KeyStoreUnavailable extends Schema.TaggedError<KeyStoreUnavailable>()("KeyStoreUnavailable", {
  detail: Schema.String
}) {
  override get message(): string {
    return this.detail
  }
}

/** Why a key could not be listed, made or revoked through a key: one reason, which the transport answers. */
export class KeysError extends Schema.TaggedError<KeysError>()("KeysError", {
  reason: Schema.Union([
    InvalidKeyRequest,
    ScopesNotHeld,
    KeyNotFound,
    KeyAlreadyRevoked,
    KeyInConfigDirectory,
    InvalidKeyCursor,
    KeyChangeNotApplied,
    KeyStoreUnavailable
  ])
}) {
  override get message(): string {
    return this.reason.message
  }
}
