/**
 * The API-key endpoints: a team's keys listed (never their hashes), a key
 * made by a key (for its own team, with scopes it holds itself, shown once)
 * and a key revoked. The rules are the application core's (`app/Keys.ts`);
 * this is how they are asked for and answered. A change serves at once on
 * the daemon that made it, and within a second on every daemon sharing its
 * store.
 *
 * The create does not take an `Idempotency-Key`, unlike the other creates:
 * its answer holds the only copy of the new key, and keeping that answer to
 * replay it would store the key itself, where only its hash is ever kept.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { ApiKeyView, CreatedApiKeyView, MAX_KEY_DAYS, NewApiKeyRequest } from "../domain/ApiKey.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import {
  BadRequest,
  Conflict,
  Forbidden,
  InternalError,
  NotFound,
  ServiceUnavailable,
  TooManyRequests
} from "./problems.ts"
import { Page, PageQuery } from "./resources.ts"

// The model's shapes (`domain/ApiKey.ts`), so the core answers them without the contract.
export { ApiKeyView, CreatedApiKeyView, NewApiKeyRequest }

/** The id the docs page's revoke snippet names; its test puts in the id the create snippet answered. */
export const KEY_ID_EXAMPLE = "key_3mfw7xq2kz5n"

const activeExample: typeof ApiKeyView.Encoded = {
  id: KEY_ID_EXAMPLE,
  name: "shop backend",
  team: "acme",
  scopes: ["validate:offers", "verifications:write"],
  createdAt: "2026-11-02T09:14:27.512Z",
  expiresAt: "2027-01-31T09:14:27.512Z",
  revokedAt: null,
  status: "active"
}

const revokedExample: typeof ApiKeyView.Encoded = {
  ...activeExample,
  revokedAt: "2026-11-20T16:02:11.034Z",
  status: "revoked"
}

export const CreateKeyRequest = NewApiKeyRequest.pipe(
  Schema.annotateEncoded({
    examples: [
      { name: "shop backend", scopes: ["validate:offers", "verifications:write"], expiresInDays: 90 },
      { name: "nightly import", scopes: ["validate:bulk"], expiresAt: "2027-12-31T23:59:59Z" }
    ]
  })
)

export const ListKeysQuery = PageQuery

const KeyIdParam = { id: Schema.String.annotate({ examples: [KEY_ID_EXAMPLE] }) }

export class KeysApi extends HttpApiGroup.make("keys")
  .add(
    HttpApiEndpoint.get("list", "/keys", {
      query: ListKeysQuery,
      success: Page(ApiKeyView, "ApiKeyPage").pipe(
        Schema.annotateEncoded({ examples: [{ data: [activeExample, revokedExample], nextCursor: null }] })
      ),
      error: [BadRequest, TooManyRequests, InternalError, ServiceUnavailable]
    })
      .annotate(RequiredScope, "keys:read")
      .annotateMerge(
        OpenApi.annotations({
          summary: "List the caller's team's API keys, ordered by id",
          description:
            "Every key of the caller's team, wherever it is kept (the config directory's `api-keys.yaml`, the data directory, the shared store): its id, name, scopes, when it was made, when it expires and when it was revoked (null when not), and `status` now (`active`, `expired`, `revoked`). Never a key or its hash. Another team's keys are not listed. `limit` (default 50, at most 100) and `cursor` as on every list."
        })
      ),
    HttpApiEndpoint.post("create", "/keys", {
      payload: CreateKeyRequest,
      success: CreatedApiKeyView.pipe(
        Schema.annotateEncoded({
          examples: [{ ...activeExample, key: "cgk_q0VhYw2Xb8m1fJ3nT6rK9pLsD4zG7cA5eH2uW0yI1oM" }]
        }),
        HttpApiSchema.status(201)
      ),
      error: [BadRequest, Forbidden, TooManyRequests, InternalError, ServiceUnavailable]
    })
      .annotate(RequiredScope, "keys:write")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Make an API key for the caller's team",
          description: `Answers 201 with the new key in \`key\` — **shown only this once**: only its hash is stored, so keep it now — and its record as the list shows it (\`Cache-Control: no-store\`). The key belongs to the caller's team and works at once, on every daemon within a second. \`scopes\` must be scopes the calling key holds itself (a key never makes more than it holds): any other is refused with 403 \`INSUFFICIENT_SCOPE\`, \`missingScopes\` naming them. The key expires after \`expiresInDays\` (1 to ${MAX_KEY_DAYS}) or at \`expiresAt\` (in the future), not both, and never after the calling key: given neither, it expires when the calling key does (never, for a key that never expires). \`name\` (1 to 100 characters) is a label to recognise it by. An \`Idempotency-Key\` is not taken here: replaying the answer would mean keeping the key itself; a retry after a lost answer makes a second key, and the first, listed by its name and time, can be revoked.`
        })
      ),
    HttpApiEndpoint.delete("revoke", "/keys/:id", {
      params: KeyIdParam,
      success: ApiKeyView.pipe(Schema.annotateEncoded({ examples: [revokedExample] })),
      error: [BadRequest, NotFound, Conflict, TooManyRequests, InternalError, ServiceUnavailable]
    })
      .annotate(RequiredScope, "keys:write")
      .annotateMerge(
        OpenApi.annotations({
          summary: "Revoke an API key of the caller's team",
          description:
            "Answers 200 with the revoked key's record (`status: revoked`, `revokedAt`). It is refused from this answer on, by this daemon at once and by every daemon within a second (401 `INVALID_API_KEY`); console sessions made with it end. A key may revoke itself: that answer is its last. A key no one of the caller's team holds — another team's, or no key at all — is 404; one revoked before is 409. The record is kept, revoked, so the list still shows it."
        })
      )
  )
  .annotateMerge(
    OpenApi.annotations({
      description:
        "A team's API keys, managed by a key with `keys:read` and `keys:write`: list them, make keys with fewer scopes for each system that calls the daemon, and revoke one that is no longer used or has leaked. Keys can also be made and revoked on the command line (`campusgate keys`)."
    })
  )
  .middleware(Authorization) {}
