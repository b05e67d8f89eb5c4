/**
 * The OpenID Connect provider of eligibility, built with `oidc-provider`
 * (certified; the code flow, PKCE, replay protection and discovery are its
 * work, not ours). What is ours, set here once:
 * - only the authorization code flow, with PKCE (S256) required of every
 *   client; no implicit flow, no dynamic registration, no device flow, no
 *   refresh tokens, no logout endpoint;
 * - the clients of `clients/*.yaml`; a confidential client's secret is
 *   checked against the hashes its file lists (`clientSecrets.ts`);
 * - ID tokens signed with the deployment's active signing key (EdDSA or
 *   ES256), published at the existing `/.well-known/jwks.json`, which
 *   discovery names as `jwks_uri`;
 * - endpoints under `/oidc/`; the login step is the hosted verification
 *   flow, asked for on every authorization (a session never stands in for
 *   proving eligibility for the offer asked about), and no consent screen;
 * - the offer an authorization is for: the `offer` parameter, else the
 *   client's only allowed offer; another is an OAuth error;
 * - claims: `sub` (per person and client), `email` and `email_verified`
 *   (scope `email`, when the offer releases it), `campusgate_eligibility`
 *   (scope `campusgate_eligibility`), in the ID token and from userinfo,
 *   as the interaction's finish stored them for the grant (`storeClaims`).
 *
 * A provider is built for one configuration and one signing key; the
 * server builds a new one when either changes (its state is in the store,
 * so nothing in flight is lost).
 */
import { createHmac, randomBytes } from "node:crypto"
import * as Effect from "effect/Effect"
import Provider, {
  type ClientMetadata,
  type Configuration,
  errors,
  interactionPolicy,
  type KoaContextWithOIDC
} from "oidc-provider"
import type { OidcClient } from "../domain/OidcClient.ts"
import { secretMatches } from "./clientSecrets.ts"
import type { OidcPayload, OidcStoreService } from "./OidcStore.ts"
import { storeAdapter } from "./oidcAdapter.ts"
import { INTERACTION_PREFIX, offerOf } from "./oidcPaths.ts"

/** The scopes a client may ask for. */
export const OIDC_SCOPES = ["openid", "email", "campusgate_eligibility"] as const

/** How long the claims of a grant, its access tokens and a login's session last (seconds). */
const GRANT_SECONDS = 3600

/** The model the claims of a grant are kept under in the store. */
const CLAIMS_MODEL = "EligibilityClaims"

/** The key that signs ID tokens: the deployment's active signing key. */
export interface IdTokenKey {
  readonly kid: string
  readonly algorithm: "EdDSA" | "ES256"
  readonly privateJwk: Readonly<Record<string, string>>
}

export interface ProviderOptions {
  /** The daemon's public URL, without a trailing slash. */
  readonly issuer: string
  readonly clients: ReadonlyArray<OidcClient>
  readonly key: IdTokenKey
  /** The deployment's verification secret: the provider's cookies are signed with a key derived from it. */
  readonly secret: string
  readonly store: OidcStoreService
}

/** The claims released for a grant: what the ID token and userinfo say of the person. */
export interface EligibilityClaims {
  readonly sub: string
  readonly email?: string | undefined
  readonly email_verified?: boolean | undefined
  readonly campusgate_eligibility: {
    readonly offer: { readonly id: string; readonly name: string }
    readonly targetGroups: ReadonlyArray<{ readonly id: string; readonly name: string }>
    readonly institution: {
      readonly name: string | null
      readonly country: string | null
      readonly type: string
    } | null
    readonly verifiedAt: string | null
    readonly expiresAt: string | null
  }
}

/** Keeps the claims of `grantId` for as long as the grant lives. */
export const storeClaims = (store: OidcStoreService, grantId: string, claims: EligibilityClaims) =>
  store.upsert(CLAIMS_MODEL, grantId, claims as unknown as OidcPayload, GRANT_SECONDS)

/** Every authorization runs the hosted flow: no session stands in for proving eligibility for the offer asked about. */
const policy = () => {
  const prompts = interactionPolicy.base()
  prompts
    .get("login")
    ?.checks.add(
      new interactionPolicy.Check("eligibility_not_proven", "eligibility is proven for each authorization", (ctx) =>
        ctx.oidc.result?.login === undefined
          ? interactionPolicy.Check.REQUEST_PROMPT
          : interactionPolicy.Check.NO_NEED_TO_PROMPT
      )
    )
  return prompts
}

const clientMetadata = (client: OidcClient, key: IdTokenKey): ClientMetadata => ({
  client_id: client.id,
  client_name: client.name,
  redirect_uris: [...client.redirectUris],
  response_types: ["code"],
  grant_types: ["authorization_code"],
  token_endpoint_auth_method: client.type === "public" ? "none" : "client_secret_basic",
  // Never matched: the secret is checked against the file's hashes (below). The provider wants one to exist.
  ...(client.type === "public" ? {} : { client_secret: randomBytes(32).toString("base64url") }),
  id_token_signed_response_alg: key.algorithm
})

/** A provider for these clients and this key, its state in `store`. */
export const makeProvider = (options: ProviderOptions): Provider => {
  const { store, key } = options
  const clients = new Map(options.clients.map((client) => [client.id, client]))
  const cookieKey = createHmac("sha256", options.secret).update("campusgate oidc cookies v1").digest("base64url")
  const configuration: Configuration = {
    adapter: storeAdapter(store),
    clients: options.clients.map((client) => clientMetadata(client, key)),
    clientAuthMethods: ["none", "client_secret_basic"],
    jwks: { keys: [{ ...key.privateJwk, kid: key.kid, alg: key.algorithm, use: "sig" }] },
    enabledJWA: { idTokenSigningAlgValues: ["EdDSA", "ES256"] },
    responseTypes: ["code"],
    pkce: { required: () => true },
    scopes: [...OIDC_SCOPES],
    claims: {
      openid: ["sub"],
      email: ["email", "email_verified"],
      campusgate_eligibility: ["campusgate_eligibility"]
    },
    // The scopes' claims in the ID token too, not only from userinfo.
    conformIdTokenClaims: false,
    extraParams: {
      offer: (_ctx: KoaContextWithOIDC, value: string | undefined, client: { clientId: string }) => {
        const chosen = offerOf(clients.get(client.clientId), value)
        if ("refused" in chosen) throw new errors.InvalidRequest(chosen.refused)
      }
    },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: true }
    },
    routes: {
      authorization: "/oidc/auth",
      token: "/oidc/token",
      userinfo: "/oidc/userinfo",
      jwks: "/.well-known/jwks.json",
      end_session: "/oidc/session/end"
    },
    interactions: {
      url: (_ctx, interaction) => `${INTERACTION_PREFIX}${interaction.uid}`,
      policy: policy()
    },
    cookies: { keys: [cookieKey] },
    ttl: { Grant: GRANT_SECONDS, Session: GRANT_SECONDS, AccessToken: GRANT_SECONDS, Interaction: 3600 },
    findAccount: async (_ctx, sub, token) => {
      const grantId = token?.grantId
      const stored = grantId === undefined ? undefined : await Effect.runPromise(store.find(CLAIMS_MODEL, grantId))
      return {
        accountId: sub,
        claims: () => (stored !== undefined && stored.sub === sub ? { ...stored, sub } : { sub })
      }
    }
  }
  const provider = new Provider(options.issuer, configuration)
  // Behind a proxy that terminates TLS, as the rest of the daemon trusts `X-Forwarded-Proto`.
  provider.proxy = true
  const prototype = provider.Client.prototype as unknown as {
    compareClientSecret(this: { clientId: string }, actual: string): boolean
  }
  prototype.compareClientSecret = function (actual) {
    const hashes = clients.get(this.clientId)?.secretHashes
    return hashes !== undefined && secretMatches(hashes, actual)
  }
  return provider
}
