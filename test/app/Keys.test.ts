/**
 * The rules of keys managed by a key (`Keys.createFor`, `revokeFor`,
 * `listFor`) over the memory store: the caller's team only, scopes the
 * caller holds, never outliving it; a change the reload rejects is not
 * left usable; reloads asked for at once are run together.
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import { describe, expect, it } from "vitest"
import { type KeyHolder, Keys } from "../../src/app/Keys.ts"
import type { KeysError } from "../../src/app/KeysError.ts"
import type { ReloadOutcome } from "../../src/app/Snapshot.ts"
import { allScopes, type Scope } from "../../src/domain/ApiKey.ts"
import type { TeamId } from "../../src/domain/Identifiers.ts"
import { ApiKeyStore, ApiKeysError } from "../../src/keys/ApiKeyStore.ts"
import { ApiKeysFileNotWritable } from "../../src/keys/apiKeyFiles.ts"

const memoryStore = () => Effect.runSync(Effect.provide(Effect.service(ApiKeyStore), ApiKeyStore.layerMemory))

/** Keys over a fresh memory store, with a reload that answers `outcome` after `delayMs`, counted. */
const setup = (outcome: ReloadOutcome = { ok: true, generation: 2, change: "reload" }, delayMs = 0) => {
  const store = memoryStore()
  const counted = { reloads: 0 }
  const reload = Effect.andThen(
    Effect.sleep(delayMs),
    Effect.sync(() => {
      counted.reloads++
      return outcome
    })
  )
  return { store, counted, keys: Keys.make(store, { reload }) }
}

/** A key stored for `team` with `scopes`, as the caller it becomes. */
const holder = async (
  keys: Keys["Service"],
  team: string,
  scopes: ReadonlyArray<Scope>,
  expiresAt?: string
): Promise<KeyHolder> => {
  const made = await Effect.runPromise(
    keys.create({ team: team as TeamId, scopes, ...(expiresAt === undefined ? {} : { expiresAt }) }, false)
  )
  return { keyId: made.id, team, scopes: new Set(scopes) }
}

const failure = async <A>(effect: Effect.Effect<A, KeysError>) => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const reason = exit.cause.reasons.find((one) => one._tag === "Fail")
  return (reason as { error: KeysError }).error.reason
}

describe("Keys managed by a key", () => {
  it("makes keys of the caller's team with scopes it holds, and names those it does not", async () => {
    const { keys } = setup()
    const caller = await holder(keys, "acme", ["keys:write", "validate:offers"])
    const made = await Effect.runPromise(
      keys.createFor(caller, { scopes: ["validate:offers", "validate:offers"], name: "shop" })
    )
    expect(made).toMatchObject({ team: "acme", scopes: ["validate:offers"], name: "shop", status: "active" })
    const refused = await failure(keys.createFor(caller, { scopes: ["validate:offers", "offers:write", "keys:read"] }))
    expect(refused).toMatchObject({ _tag: "ScopesNotHeld", missing: ["offers:write", "keys:read"] })
  })

  it("never makes a key that outlives its maker", async () => {
    const { keys } = setup()
    const now = Date.parse("2027-01-01T00:00:00Z")
    const caller = await holder(keys, "acme", allScopes, "2099-01-11T00:00:00.000Z")
    const inherits = await Effect.runPromise(keys.createFor(caller, { scopes: ["validate:offers"] }, now))
    expect(inherits.expiresAt).toBe("2099-01-11T00:00:00.000Z")
    const later = await failure(
      keys.createFor(caller, { scopes: ["validate:offers"], expiresAt: "2099-02-01T00:00:00Z" }, now)
    )
    expect(later).toMatchObject({ _tag: "InvalidKeyRequest", errors: [{ field: "/expiresAt", code: "OUTLIVES_KEY" }] })
    const offset = await Effect.runPromise(
      keys.createFor(caller, { scopes: ["validate:offers"], expiresAt: "2098-06-01T02:00:00+02:00" }, now)
    )
    expect(offset.expiresAt).toBe("2098-06-01T00:00:00.000Z")
  })

  it("sees and revokes its own team's keys only: another team's is not found, as no key is", async () => {
    const { keys } = setup()
    const acme = await holder(keys, "acme", allScopes)
    const globex = await holder(keys, "globex", allScopes)
    const theirs = await Effect.runPromise(keys.createFor(acme, { scopes: ["validate:offers"] }))
    expect(await failure(keys.revokeFor(globex, theirs.id))).toMatchObject({ _tag: "KeyNotFound", id: theirs.id })
    expect(await failure(keys.revokeFor(globex, "key_nosuchkey00"))).toMatchObject({ _tag: "KeyNotFound" })
    const globexList = await Effect.runPromise(keys.listFor("globex", { limit: 50 }))
    expect(globexList.data.map((key) => key.id)).toEqual([globex.keyId])
    const revoked = await Effect.runPromise(keys.revokeFor(acme, theirs.id))
    expect(revoked).toMatchObject({ id: theirs.id, status: "revoked" })
    expect(await failure(keys.revokeFor(acme, theirs.id))).toMatchObject({ _tag: "KeyAlreadyRevoked" })
    const listed = await Effect.runPromise(keys.listFor("acme", { limit: 50 }))
    expect(listed.data.find((key) => key.id === theirs.id)?.status).toBe("revoked")
    expect(JSON.stringify(listed)).not.toContain("sha256")
  })

  it("leaves no usable key when the reload is rejected: the new one is revoked again", async () => {
    const { keys, store } = setup({ ok: false, problems: [{ path: "offers[0]", message: "broken" }] })
    const caller = await holder(keys, "acme", allScopes)
    const refused = await failure(keys.createFor(caller, { scopes: ["validate:offers"] }))
    expect(refused._tag).toBe("KeyChangeNotApplied")
    const records = (await Effect.runPromise(store.list)).map((listed) => listed.record)
    const made = records.filter((record) => record.id !== caller.keyId)
    expect(made).toHaveLength(1)
    expect(made[0]!.revokedAt).toEqual(expect.any(String))
  })

  it("answers a key in a config directory it cannot write as such, naming where to revoke it", async () => {
    // A read-only config directory (a checkout mounted read-only), which the tests, run as root, cannot make.
    const store = memoryStore()
    const readOnly = {
      ...store,
      revoke: (_id: string, _at: string) =>
        Effect.fail(
          new ApiKeysError({ reason: new ApiKeysFileNotWritable({ file: "config/api-keys.yaml", reason: "EROFS" }) })
        )
    }
    const keys = Keys.make(readOnly)
    const caller = await holder(keys, "acme", allScopes)
    const refused = await failure(keys.revokeFor(caller, caller.keyId))
    expect(refused).toMatchObject({ _tag: "KeyInConfigDirectory", id: caller.keyId })
    expect(refused.message).toContain("in git")
  })

  it("runs reloads asked for at once together: 20 keys made at once, a few reloads", async () => {
    const { keys, counted } = setup({ ok: true, generation: 2, change: "reload" }, 20)
    const caller = await holder(keys, "acme", allScopes)
    const made = await Effect.runPromise(
      Effect.all(
        Array.from({ length: 20 }, () => keys.createFor(caller, { scopes: ["validate:offers"] })),
        { concurrency: "unbounded" }
      )
    )
    expect(new Set(made.map((key) => key.id)).size).toBe(20)
    expect(counted.reloads).toBeGreaterThanOrEqual(1)
    expect(counted.reloads).toBeLessThanOrEqual(3)
  })
})
