/**
 * A relying party of the OpenID Connect provider (`clients/*.yaml` in the
 * config directory): who it is, where the provider may send the browser
 * back (exact redirect URIs, as OAuth 2.0 Security BCP asks), which offers
 * it may ask eligibility for, and, for a confidential client (a backend),
 * the hashes of its secret — more than one while a new secret replaces the
 * old, so a rotation never breaks sign-ins. Every client uses PKCE (S256);
 * a public client (a single-page or mobile app) has no secret at all.
 */
import * as Schema from "effect/Schema"
import { OfferId } from "./Identifiers.ts"
import { HTTP_PROTOCOLS, urlOf } from "./urls.ts"

/** A client id: a slug, as other ids are, so it reads well in logs and URLs. */
export const OidcClientId = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(/^[a-z0-9][a-z0-9._-]{0,63}$/, {
      message:
        'a client id is 1-64 characters: lower-case letters, digits, ".", "_" or "-", starting with a letter or digit'
    })
  )
)

const isLocal = (url: URL) => url.hostname === "localhost" || url.hostname === "127.0.0.1" || url.hostname === "[::1]"

/** A redirect URI, compared exactly: https (http only for localhost), no fragment. */
export const RedirectUri = Schema.String.pipe(
  Schema.check(
    Schema.makeFilter((text: string) => {
      const url = urlOf(text, HTTP_PROTOCOLS)
      if (url === null || text.length > 2048) return "an absolute https URL (at most 2048 characters)"
      if (url.hash !== "" || text.includes("#")) return "a redirect URI has no fragment"
      return url.protocol === "https:" || isLocal(url) ? true : "an https URL (http only for localhost)"
    })
  )
)

/** A client secret's hash as `campusgate clients secret` prints it: `sha256:` and 64 hex digits. */
export const SecretHash = Schema.String.pipe(
  Schema.check(
    Schema.isPattern(/^sha256:[0-9a-f]{64}$/, {
      message: "sha256: and 64 hex digits, as `campusgate clients secret` prints it"
    })
  )
)

export const OidcClient = Schema.Struct({
  id: OidcClientId,
  name: Schema.NonEmptyString,
  type: Schema.Literals(["public", "confidential"]),
  redirectUris: Schema.Array(RedirectUri).pipe(
    Schema.check(Schema.isMinLength(1, { message: "a client needs at least one redirect URI" }))
  ),
  allowedOffers: Schema.Array(OfferId).pipe(
    Schema.check(Schema.isMinLength(1, { message: "a client needs at least one offer" }))
  ),
  secretHashes: Schema.optionalKey(Schema.Array(SecretHash))
}).pipe(
  Schema.check(
    Schema.makeFilter((client) => {
      const hashes = client.secretHashes?.length ?? 0
      if (client.type === "confidential" && hashes === 0)
        return { path: ["secretHashes"], issue: "a confidential client needs at least one secret hash" }
      if (client.type === "public" && client.secretHashes !== undefined)
        return { path: ["secretHashes"], issue: "a public client has no secret (it uses PKCE alone)" }
      return true
    })
  )
)
export type OidcClient = typeof OidcClient.Type
