/**
 * The OpenID Connect provider in force, as the server asks for it: one
 * `oidc-provider` instance for the configuration's clients, the
 * deployment's active signing key and the public URL, built again when one
 * of them changes (its state is in `OidcStore`, so nothing in flight is
 * lost, and a rotated key signs the next ID token). `oidc-provider` is
 * loaded with the first provider, so a deployment without clients never
 * loads it. The slice's application file: the transport (`server/oidc.ts`)
 * reaches the signing keys and the provider's store only through it.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type Provider from "oidc-provider"
import { Snapshot } from "../app/Snapshot.ts"
import type { OidcClient } from "../domain/OidcClient.ts"
import { Log } from "../observability/Log.ts"
import { SigningKeyStore } from "../verification/SigningKeyStore.ts"
import { activeKey } from "../verification/signing.ts"
import { OidcStore } from "./OidcStore.ts"
import type { EligibilityClaims } from "./oidcProvider.ts"

/** A provider built for one configuration, signing key and issuer. */
export interface BuiltProvider {
  readonly provider: Provider
  /** `oidc-provider`'s own handler of its paths. */
  readonly handle: ReturnType<Provider["callback"]>
  readonly clients: ReadonlyMap<string, OidcClient>
  /** The scopes a grant may hold. */
  readonly scopes: ReadonlyArray<string>
  /** Keeps what the ID token and userinfo say of the person for the grant's lifetime. */
  storeClaims(grantId: string, claims: EligibilityClaims): Promise<void>
}

export interface OidcProvidersOptions {
  /** The deployment's verification secret: the provider's cookies are signed with a key derived from it. */
  readonly secret: string
  /** The daemon's public URL, without a trailing slash: the issuer. */
  readonly publicUrl: () => string
}

export class OidcProviders extends Context.Service<
  OidcProviders,
  {
    /** The provider in force; undefined when there is no signing key to sign with. */
    current(): Promise<BuiltProvider | undefined>
  }
>()("campusgate/oidc/OidcProviders") {
  static readonly layer = (
    options: OidcProvidersOptions
  ): Layer.Layer<OidcProviders, never, Snapshot | SigningKeyStore | OidcStore | Log> =>
    Layer.effect(
      OidcProviders,
      Effect.gen(function* () {
        const snapshot = yield* Snapshot
        const signingKeys = yield* SigningKeyStore
        const store = yield* OidcStore
        const log = yield* Log
        let built: { readonly stamp: string; readonly provider: BuiltProvider } | undefined

        const current = async (): Promise<BuiltProvider | undefined> => {
          const { generation, config } = snapshot.current()
          const key = activeKey(await Effect.runPromise(signingKeys.list()))
          if (key === undefined) return undefined
          const issuer = options.publicUrl()
          const stamp = `${generation}\n${key.kid}\n${issuer}`
          if (built?.stamp === stamp) return built.provider
          const module = await import("./oidcProvider.ts")
          const clients = config.clients ?? []
          const provider = module.makeProvider({ issuer, clients, key, secret: options.secret, store })
          provider.on("server_error", (_ctx, error) =>
            log.write("error", "OpenID Connect provider error", { error: String(error) })
          )
          const made: BuiltProvider = {
            provider,
            handle: provider.callback(),
            clients: new Map(clients.map((client) => [client.id, client])),
            scopes: module.OIDC_SCOPES,
            storeClaims: (grantId, claims) => Effect.runPromise(module.storeClaims(store, grantId, claims))
          }
          built = { stamp, provider: made }
          return made
        }

        return OidcProviders.of({ current })
      })
    )
}
