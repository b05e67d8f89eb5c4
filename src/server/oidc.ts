/**
 * The OpenID Connect provider on the daemon's one HTTP server: requests for
 * discovery (`/.well-known/openid-configuration`) and under `/oidc/` are
 * taken at the `node:http` level, before the Effect app, as the fast path
 * takes validations (`NodeServer.ts`), and handed to `oidc-provider`'s own
 * handler — except the interaction, which is ours:
 * - `GET /oidc/interaction/{uid}`: the provider asks for a login; the
 *   browser goes to the hosted flow of the authorization's offer
 *   (`/verify/{offerId}?interaction={uid}`);
 * - `GET /oidc/interaction/{uid}/finish`: where the hosted flow sends the
 *   browser once verified. Taken only with the interaction's own cookie
 *   (the provider's, set for this browser when the authorization began),
 *   the flow's proof over uid, verification and sealed address, and a
 *   verification that is verified and for that offer; then the grant (the
 *   scopes asked that the provider supports; no consent screen) and its
 *   claims are stored, and the provider resumes the authorization.
 *
 * With no client configured, nothing is taken (those paths answer 404).
 * The provider is rebuilt when the configuration, the signing key or the
 * public URL changes (its state is in the store, so nothing in flight is
 * lost): a rotated key signs the next ID token.
 */
import { timingSafeEqual } from "node:crypto"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type Provider from "oidc-provider"
import { Snapshot } from "../app/Snapshot.ts"
import { escapeHtml } from "../domain/MessageTemplate.ts"
import type { OidcClient } from "../domain/OidcClient.ts"
import { Log } from "../observability/Log.ts"
import { OidcStore } from "../oidc/OidcStore.ts"
import { DISCOVERY_PATH, INTERACTION_PREFIX, OIDC_PREFIX, offerOf } from "../oidc/oidcPaths.ts"
import type { EligibilityClaims } from "../oidc/oidcProvider.ts"
import { SigningKeyStore } from "../verification/SigningKeyStore.ts"
import { activeKey } from "../verification/signing.ts"
import { Verifications } from "../verification/Verifications.ts"
import { policyOf } from "../verification/verificationPolicy.ts"
import { flowKeys } from "./hosted/flowCookie.ts"
import { Metrics } from "./metrics.ts"
import { RequestLogger, recordRequest } from "./RequestLogger.ts"
import { REQUEST_ID_HEADER, requestIdFor } from "./requestId.ts"

export interface OidcOptions {
  /** The deployment's verification secret (flows' proofs, the provider's cookies). */
  readonly secret: string
  /** The daemon's public URL, without a trailing slash: the issuer. */
  readonly publicUrl: () => string
}

interface Built {
  readonly module: typeof import("../oidc/oidcProvider.ts")
  readonly generation: number
  readonly kid: string
  readonly issuer: string
  readonly provider: Provider
  readonly handle: (request: IncomingMessage, response: ServerResponse) => void
  readonly clients: ReadonlyMap<string, OidcClient>
}

const PRIVATE = {
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "content-type": "text/html; charset=utf-8"
}

const plainPage = (response: ServerResponse, status: number, text: string) => {
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

/** The route template a request is counted and logged under: never the path as sent (a uid, a code in the query). */
const templateOf = (url: string | undefined): string => {
  const path = (url ?? "/").split("?", 1)[0]!
  if (path.startsWith(INTERACTION_PREFIX))
    return path.endsWith("/finish") ? "/oidc/interaction/{uid}/finish" : "/oidc/interaction/{uid}"
  if (path.startsWith("/oidc/auth/")) return "/oidc/auth/{uid}"
  return path === DISCOVERY_PATH || ["/oidc/auth", "/oidc/token", "/oidc/userinfo"].includes(path) ? path : "/oidc/*"
}

/** Which of our paths a request is for: the provider's, an interaction's start or finish, or none. */
const routeOf = (url: string | undefined) => {
  const path = (url ?? "/").split("?", 1)[0]!
  if (path.startsWith(INTERACTION_PREFIX)) {
    const rest = path.slice(INTERACTION_PREFIX.length).split("/")
    if (rest.length === 1 && rest[0] !== "") return { interaction: decodeURIComponent(rest[0]!), finish: false }
    if (rest.length === 2 && rest[1] === "finish") return { interaction: decodeURIComponent(rest[0]!), finish: true }
    return { provider: false as const }
  }
  return path === DISCOVERY_PATH || path.startsWith(OIDC_PREFIX) ? { provider: true as const } : undefined
}

export class OidcEndpoints extends Context.Service<
  OidcEndpoints,
  {
    /** Answers `request` if it is the provider's (true), else leaves it untouched (false). */
    take(request: IncomingMessage, response: ServerResponse): boolean
  }
>()("campusgate/server/OidcEndpoints") {
  static readonly layer = (
    options: OidcOptions
  ): Layer.Layer<
    OidcEndpoints,
    never,
    Snapshot | Verifications | SigningKeyStore | OidcStore | Log | Metrics | RequestLogger
  > =>
    Layer.effect(
      OidcEndpoints,
      Effect.gen(function* () {
        const snapshot = yield* Snapshot
        const verifications = yield* Verifications
        const signingKeys = yield* SigningKeyStore
        const store = yield* OidcStore
        const log = yield* Log
        const metrics = yield* Metrics
        const logger = yield* RequestLogger
        const keys = flowKeys(options.secret)
        let built: Built | undefined

        /** The provider for the configuration, key and URL in force, built again when one of them changed. */
        const current = async (): Promise<Built | undefined> => {
          const { generation, config } = snapshot.current()
          const clients = config.clients ?? []
          const key = activeKey(await Effect.runPromise(signingKeys.list()))
          if (key === undefined) return undefined
          const issuer = options.publicUrl()
          if (built?.generation === generation && built.kid === key.kid && built.issuer === issuer) return built
          // Loaded on the first request: a deployment without clients never loads oidc-provider and its dependencies.
          const module = await import("../oidc/oidcProvider.ts")
          const provider = module.makeProvider({ issuer, clients, key, secret: options.secret, store })
          provider.on("server_error", (_ctx, error) =>
            log.write("error", "OpenID Connect provider error", { error: String(error) })
          )
          built = {
            module,
            generation,
            kid: key.kid,
            issuer,
            provider,
            handle: provider.callback(),
            clients: new Map(clients.map((client) => [client.id, client]))
          }
          return built
        }

        /** `GET /oidc/interaction/{uid}`: on to the hosted flow of the authorization's offer. */
        const startInteraction = async (
          built: Built,
          uid: string,
          request: IncomingMessage,
          response: ServerResponse
        ) => {
          const interaction = await built.provider.interactionDetails(request, response)
          if (interaction.uid !== uid)
            return plainPage(response, 400, "This sign-in is not the one this browser began.")
          const chosen = offerOf(built.clients.get(String(interaction.params.client_id)), interaction.params.offer)
          if ("refused" in chosen) {
            return built.provider.interactionFinished(
              request,
              response,
              { error: "access_denied", error_description: chosen.refused },
              { mergeWithLastSubmission: false }
            )
          }
          const query = new URLSearchParams({ interaction: uid })
          const locale = String(interaction.params.ui_locales ?? "").split(" ")[0]
          if (locale !== undefined && /^[a-z]{2}$/.test(locale)) query.set("locale", locale)
          response.writeHead(303, { ...PRIVATE, location: `/verify/${encodeURIComponent(chosen.offerId)}?${query}` })
          response.end()
        }

        /** `GET /oidc/interaction/{uid}/finish`: the verified flow's verification becomes the authorization's login. */
        const finishInteraction = async (
          built: Built,
          uid: string,
          request: IncomingMessage,
          response: ServerResponse
        ) => {
          const interaction = await built.provider.interactionDetails(request, response)
          const query = new URL(request.url ?? "/", "http://campusgate.invalid").searchParams
          const verificationId = query.get("verification") ?? ""
          const sealedAddress = query.get("address") ?? undefined
          const proof = query.get("proof") ?? ""
          if (interaction.uid !== uid || !sameText(proof, keys.interactionProof(uid, verificationId, sealedAddress))) {
            return plainPage(response, 400, "This sign-in is not the one this browser began.")
          }
          const clientId = String(interaction.params.client_id)
          const chosen = offerOf(built.clients.get(clientId), interaction.params.offer)
          const state = snapshot.current()
          const offer = "offerId" in chosen ? state.engine.offers.get(chosen.offerId)?.offer : undefined
          const denied = (description: string) =>
            built.provider.interactionFinished(
              request,
              response,
              { error: "access_denied", error_description: description },
              { mergeWithLastSubmission: false }
            )
          if (offer === undefined) return denied("the offer is not available")
          const person = await Effect.runPromise(
            Effect.result(verifications.person(offer.team, verificationId, `oidc:${clientId}`, sealedAddress))
          )
          if (person._tag === "Failure") return denied("the verification was not found")
          const { verification, subject, email } = person.success
          if (verification.status !== "verified" || verification.offerId !== offer.id) {
            return denied("the address was not verified for the offer")
          }
          const group = state.engine.targetGroups.get(verification.targetGroupId)?.targetGroup
          const release = policyOf(state, { offerId: offer.id }).releaseEmail && email !== undefined
          const claims: EligibilityClaims = {
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
          const asked = String(interaction.params.scope ?? "").split(" ")
          const grant = new built.provider.Grant({ accountId: subject, clientId })
          grant.addOIDCScope(built.module.OIDC_SCOPES.filter((scope) => asked.includes(scope)).join(" "))
          const grantId = await grant.save()
          await Effect.runPromise(built.module.storeClaims(store, grantId, claims))
          await built.provider.interactionFinished(
            request,
            response,
            { login: { accountId: subject, remember: false }, consent: { grantId } },
            { mergeWithLastSubmission: false }
          )
        }

        const serve = async (
          route: NonNullable<ReturnType<typeof routeOf>>,
          request: IncomingMessage,
          response: ServerResponse
        ): Promise<void> => {
          const provider = await current()
          if (provider === undefined) return plainPage(response, 503, "Sign-in is unavailable. Please try again.")
          if ("provider" in route) {
            if (!route.provider) return plainPage(response, 404, "Not found.")
            return provider.handle(request, response)
          }
          if (request.method !== "GET") return plainPage(response, 405, "Method not allowed.")
          try {
            await (route.finish ? finishInteraction : startInteraction)(provider, route.interaction, request, response)
          } catch (error) {
            // No interaction cookie, or an interaction that has expired: the browser has to begin again.
            if ((error as { name?: string }).name === "SessionNotFound") {
              plainPage(response, 400, "This sign-in has expired or was begun in another browser. Please start again.")
            } else throw error
          }
        }

        return OidcEndpoints.of({
          take: (request, response) => {
            // No client configured: the provider is off, and its paths are the Effect app's (404).
            if ((snapshot.current().config.clients?.length ?? 0) === 0) return false
            const route = routeOf(request.url)
            if (route === undefined) return false
            // Counted and logged as every other request is, under its route template.
            const started = performance.now()
            const requestId = requestIdFor(request.headers[REQUEST_ID_HEADER] as string | undefined)
            response.setHeader(REQUEST_ID_HEADER, requestId)
            response.once("finish", () =>
              recordRequest(
                metrics,
                logger,
                {
                  method: request.method ?? "GET",
                  route: templateOf(request.url),
                  status: response.statusCode,
                  started
                },
                requestId,
                undefined
              )
            )
            // The body (a token request's form) stays unread, in the request's buffer, until the provider in force is known.
            serve(route, request, response).catch((error) => {
              log.write("error", "OpenID Connect request failed", { error: String(error) })
              if (!response.headersSent) plainPage(response, 503, "Sign-in is unavailable. Please try again.")
              else response.destroy()
            })
            return true
          }
        })
      })
    )
}
