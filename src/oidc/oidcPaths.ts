/**
 * What the server needs of the OpenID Connect provider before (and without)
 * loading `oidc-provider`: where its endpoints live, and which offer an
 * authorization asks about. The provider itself (`oidcProvider.ts`) is
 * loaded on the first request to one of these paths.
 */
import type { OidcClient } from "../domain/OidcClient.ts"

/** Where the provider's own endpoints live (the interaction's pages are the server's). */
export const OIDC_PREFIX = "/oidc/"
export const DISCOVERY_PATH = "/.well-known/openid-configuration"
/** The interaction a browser is sent to: `/oidc/interaction/<uid>`, and `/finish` after it once verified. */
export const INTERACTION_PREFIX = "/oidc/interaction/"

/**
 * The offer an authorization asks about: the `offer` parameter, else the
 * client's only allowed offer; a message when there is none or it is not
 * allowed.
 */
export const offerOf = (
  client: Pick<OidcClient, "allowedOffers"> | undefined,
  asked: unknown
): { readonly offerId: string } | { readonly refused: string } => {
  if (client === undefined) return { refused: "unknown client" }
  if (asked === undefined || asked === "") {
    const [only, ...others] = client.allowedOffers
    return only !== undefined && others.length === 0
      ? { offerId: only }
      : { refused: "name the offer with the offer parameter (this client is allowed several)" }
  }
  return typeof asked === "string" && (client.allowedOffers as ReadonlyArray<string>).includes(asked)
    ? { offerId: asked }
    : { refused: "the offer is not one this client is allowed" }
}
