/**
 * `oidc-provider`'s storage adapter over the `OidcStore` port: one adapter
 * per model, each call an effect of the store run to a promise. Redeeming
 * an authorization code is where replays are stopped: the provider refuses
 * a code it reads as consumed, and `consume` here refuses one another
 * request (on this daemon or another) consumed between that read and this
 * write, with the same `invalid_grant`.
 */
import * as Effect from "effect/Effect"
import { type Adapter, type AdapterPayload, errors } from "oidc-provider"
import type { OidcStoreService } from "./OidcStore.ts"

/** The adapter factory `oidc-provider`'s `adapter` setting takes. */
export const storeAdapter =
  (store: OidcStoreService) =>
  (model: string): Adapter => {
    const run = <A, E>(effect: Effect.Effect<A, E>): Promise<A> => Effect.runPromise(effect)
    return {
      upsert: (id, payload, expiresIn) => run(store.upsert(model, id, payload as Record<string, unknown>, expiresIn)),
      find: async (id) => (await run(store.find(model, id))) as AdapterPayload | undefined,
      findByUid: async (uid) => (await run(store.findSessionByUid(uid))) as AdapterPayload | undefined,
      // No device flow: nothing is ever found by a user code.
      findByUserCode: async () => undefined,
      consume: async (id) => {
        if (!(await run(store.consume(model, id)))) throw new errors.InvalidGrant(`${model} already consumed`)
      },
      destroy: (id) => run(store.destroy(model, id)),
      revokeByGrantId: (grantId) => run(store.revokeByGrantId(grantId))
    }
  }
