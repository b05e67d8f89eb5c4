/**
 * The OpenID Connect provider's login step, which is the hosted flow:
 * - `GET /oidc/interaction/{uid}` (`startInteraction`): the provider asks
 *   for a login; the browser goes to the hosted flow of the authorization's
 *   offer (`/verify/{offerId}?interaction={uid}`, in the language of
 *   `ui_locales` when it names one);
 * - `GET /oidc/interaction/{uid}/finish` (`finishInteraction`): where the
 *   hosted flow sends the browser once verified. Taken only with the
 *   interaction's own cookie (the provider's, set for the browser that began
 *   the authorization), the flow's proof over uid, verification and sealed
 *   address, and a verification that is verified and for that offer; then
 *   the grant (the scopes asked for; no consent screen) and its claims are
 *   stored, and the provider resumes the authorization. Anything else ends
 *   the authorization with `access_denied` at the client.
 */
import { timingSafeEqual } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Effect from "effect/Effect"
import type { Snapshot } from "../app/Snapshot.ts"
import { escapeHtml } from "../domain/MessageTemplate.ts"
import type { BuiltProvider as Built } from "../oidc/OidcProviders.ts"
import { offerOf } from "../oidc/oidcPaths.ts"
import type { EligibilityClaims } from "../oidc/oidcProvider.ts"
import type { VerificationsService, VerifiedPerson } from "../verification/Verifications.ts"
import { policyOf } from "../verification/verificationPolicy.ts"
import type { FlowKeys } from "./hosted/flowCookie.ts"

/** What the finish reads and writes besides the provider. */
export interface InteractionDependencies {
  readonly snapshot: Snapshot["Service"]
  readonly verifications: VerificationsService
  readonly keys: FlowKeys
}

const PRIVATE = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "content-type": "text/html; charset=utf-8"
}

/** A one-sentence page: what a browser is told when there is no client to send it back to. */
export const plainPage = (response: ServerResponse, status: number, text: string): void => {
  response.writeHead(status, PRIVATE)
  response.end(
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(text)}</title></head><body><p>${escapeHtml(text)}</p></body></html>\n`
  )
}

const sameText = (a: string, b: string) => {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

const NOT_THIS_BROWSER = "This sign-in is not the one this browser began."

/** Ends the authorization at the client with `access_denied`. */
const deny = (built: Built, request: IncomingMessage, response: ServerResponse, description: string) =>
  built.provider.interactionFinished(
    request,
    response,
    { error: "access_denied", error_description: description },
    { mergeWithLastSubmission: false }
  )

/** `GET /oidc/interaction/{uid}`: on to the hosted flow of the authorization's offer. */
export const startInteraction = async (
  built: Built,
  uid: string,
  request: IncomingMessage,
  response: ServerResponse
): Promise<void> => {
  const interaction = await built.provider.interactionDetails(request, response)
  if (interaction.uid !== uid) return plainPage(response, 400, NOT_THIS_BROWSER)
  const chosen = offerOf(built.clients.get(String(interaction.params.client_id)), interaction.params.offer)
  if ("refused" in chosen) return deny(built, request, response, chosen.refused)
  const query = new URLSearchParams({ interaction: uid })
  const locale = String(interaction.params.ui_locales ?? "").split(" ")[0]
  if (locale !== undefined && /^[a-z]{2}$/.test(locale)) query.set("locale", locale)
  response.writeHead(303, { ...PRIVATE, location: `/verify/${encodeURIComponent(chosen.offerId)}?${query}` })
  response.end()
}

/** What the ID token and userinfo say of the person: the address only when the offer releases it. */
const claimsOf = (
  snapshot: Snapshot["Service"],
  offer: { readonly id: string; readonly name: string },
  person: VerifiedPerson
): EligibilityClaims => {
  const state = snapshot.current()
  const { verification, subject, email } = person
  const group = state.engine.targetGroups.get(verification.targetGroupId)?.targetGroup
  const release = policyOf(state, { offerId: offer.id }).releaseEmail && email !== undefined
  return {
    sub: subject,
    ...(release ? { email, email_verified: true } : {}),
    campusgate_eligibility: {
      offer: { id: offer.id, name: offer.name },
      targetGroups: [{ id: verification.targetGroupId, name: group?.name ?? verification.targetGroupId }],
      institution: verification.institution,
      verifiedAt: verification.finishedAt,
      expiresAt: verification.eligibility?.expiresAt ?? null
    }
  }
}

/** `GET /oidc/interaction/{uid}/finish`: the verified flow's verification becomes the authorization's login. */
export const finishInteraction = async (
  built: Built,
  dependencies: InteractionDependencies,
  uid: string,
  request: IncomingMessage,
  response: ServerResponse
): Promise<void> => {
  const interaction = await built.provider.interactionDetails(request, response)
  const query = new URL(request.url ?? "/", "http://campusgate.invalid").searchParams
  const verificationId = query.get("verification") ?? ""
  const sealedAddress = query.get("address") ?? undefined
  const proof = query.get("proof") ?? ""
  const expected = dependencies.keys.interactionProof(uid, verificationId, sealedAddress)
  if (interaction.uid !== uid || !sameText(proof, expected)) return plainPage(response, 400, NOT_THIS_BROWSER)
  const clientId = String(interaction.params.client_id)
  const chosen = offerOf(built.clients.get(clientId), interaction.params.offer)
  const offer =
    "offerId" in chosen ? dependencies.snapshot.current().engine.offers.get(chosen.offerId)?.offer : undefined
  if (offer === undefined) return deny(built, request, response, "the offer is not available")
  const person = await Effect.runPromise(
    Effect.result(dependencies.verifications.person(offer.team, verificationId, `oidc:${clientId}`, sealedAddress))
  )
  if (person._tag === "Failure") return deny(built, request, response, "the verification was not found")
  const { verification, subject } = person.success
  if (verification.status !== "verified" || verification.offerId !== offer.id) {
    return deny(built, request, response, "the address was not verified for the offer")
  }
  const asked = String(interaction.params.scope ?? "").split(" ")
  const grant = new built.provider.Grant({ accountId: subject, clientId })
  grant.addOIDCScope(built.scopes.filter((scope) => asked.includes(scope)).join(" "))
  const grantId = await grant.save()
  await built.storeClaims(grantId, claimsOf(dependencies.snapshot, offer, person.success))
  await built.provider.interactionFinished(
    request,
    response,
    { login: { accountId: subject, remember: false }, consent: { grantId } },
    { mergeWithLastSubmission: false }
  )
}
