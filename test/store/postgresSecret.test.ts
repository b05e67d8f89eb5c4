/**
 * A deployment's generated secrets in PostgreSQL: daemons starting together
 * on an empty database agree on one value (each with a pool of its own, as
 * separate processes), the value outlives them, and a secret the
 * environment sets is used as is.
 */
import { expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { secretsFrom } from "../../src/config/environment.ts"
import { secretInPostgres } from "../../src/deployment/postgresStores.ts"
import { deploymentSecrets } from "../../src/deployment/secrets.ts"
import { migrate, postgresClientLayer } from "../../src/store/postgres.ts"
import { migrations, postgresSecret } from "../../src/store/postgresSecret.ts"
import { describePostgres, testDatabase } from "../postgresTesting.ts"

const noEnvironment = secretsFrom({})

describePostgres("generated secrets in PostgreSQL", () => {
  it.live("five daemons asking at once for a secret none has made agree on one value, kept for the next", () =>
    Effect.gen(function* () {
      const { url } = yield* testDatabase
      yield* Effect.provide(migrate(migrations), postgresClientLayer(url))
      const values = yield* Effect.all(
        Array.from({ length: 5 }, () =>
          Effect.provide(secretInPostgres(deploymentSecrets.webhook, noEnvironment), postgresClientLayer(url))
        ),
        { concurrency: "unbounded" }
      )
      expect(new Set(values).size).toBe(1)
      expect(values[0]).toMatch(/^[A-Za-z0-9_-]{43}$/)
      const later = yield* Effect.provide(
        secretInPostgres(deploymentSecrets.webhook, noEnvironment),
        postgresClientLayer(url)
      )
      expect(later).toBe(values[0])
      // Each secret is its own, made its own way.
      const hashKey = yield* Effect.provide(
        secretInPostgres(deploymentSecrets.statsHashKey, noEnvironment),
        postgresClientLayer(url)
      )
      expect(hashKey).toMatch(/^[0-9a-f]{64}$/)
    }).pipe(Effect.scoped)
  )

  it.live("uses the environment's secret and leaves the database alone", () =>
    Effect.gen(function* () {
      const { url } = yield* testDatabase
      yield* Effect.provide(migrate(migrations), postgresClientLayer(url))
      const configured = secretsFrom({ CAMPUSGATE_WEBHOOK_SECRET: "from-the-environment" })
      expect(configured.webhookSecret).toBe("from-the-environment")
      expect(
        yield* Effect.provide(secretInPostgres(deploymentSecrets.webhook, configured), postgresClientLayer(url))
      ).toBe("from-the-environment")
      const made = yield* Effect.provide(
        postgresSecret("webhook-secret", () => "made"),
        postgresClientLayer(url)
      )
      expect(made).toBe("made")
    }).pipe(Effect.scoped)
  )
})
