/**
 * The daemon's status for its operators: the version, since when it runs,
 * and the configuration in force — its generation, when it was loaded,
 * whether a rejected change left an older config serving, and that
 * change's problems with file and line; the rate limits in force; and the
 * caller's team's keys about to expire. `/readyz` tells anyone only
 * whether the daemon is ready; this detail names files and quotes them, so
 * it needs a key with `status:read`.
 */
import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import * as Schema from "effect/Schema"
import { Count } from "../domain/Count.ts"
import { ConfigurationProblem } from "../domain/errors.ts"
import { Authorization, RequiredScope } from "./Authorization.ts"
import { ServiceUnavailable, TooManyRequests } from "./problems.ts"

export const ConfigStatus = Schema.Struct({
  /** 1 for the first load, +1 for each change applied. */
  generation: Schema.Int,
  loadedAt: Schema.String,
  /** The last change was rejected: the config of `generation` keeps serving. */
  stale: Schema.Boolean,
  /** The problems of the last rejected change (empty when the last change applied). */
  problems: Schema.Array(ConfigurationProblem),
  lastAttemptAt: Schema.String,
  /** Changes applied and rejected since start; `incremental`: of those applied, the API writes applied as the one item they changed, without a full reload. */
  reloads: Schema.Struct({ applied: Schema.Int, rejected: Schema.Int, incremental: Schema.Int })
})

/** One rate-limit budget: requests per window. */
export const RateLimitPolicy = Schema.Struct({ requests: Schema.Int, windowSeconds: Schema.Int })

/**
 * The budgets in force (`rateLimits` in campusgate.yaml), by bucket: per
 * API key, and sign-ins per client address. Every value is a budget, so a
 * client can list them all.
 */
export const RateLimitsStatus = Schema.Struct({
  bulk: RateLimitPolicy,
  jobs: RateLimitPolicy,
  validate: RateLimitPolicy,
  verifications: RateLimitPolicy,
  default: RateLimitPolicy,
  signIn: RateLimitPolicy
})

/** A key of the caller's team that still works and expires soon. */
export const ExpiringKey = Schema.Struct({
  id: Schema.String,
  name: Schema.optionalKey(Schema.String),
  expiresAt: Schema.String
})

export const DaemonStatus = Schema.Struct({
  status: Schema.Literal("ready"),
  version: Schema.String,
  startedAt: Schema.String,
  uptimeSeconds: Count,
  config: ConfigStatus,
  rateLimits: RateLimitsStatus,
  /** The caller's team's keys that still work and expire within 14 days, soonest first (empty when none). */
  keys: Schema.Array(ExpiringKey)
}).annotate({ identifier: "DaemonStatus" })
export type DaemonStatus = typeof DaemonStatus.Type

export class StatusApi extends HttpApiGroup.make("status")
  .add(
    HttpApiEndpoint.get("get", "/status", { success: DaemonStatus, error: [TooManyRequests, ServiceUnavailable] })
      .annotate(RequiredScope, "status:read")
      .annotateMerge(
        OpenApi.annotations({
          summary: "The daemon's version, uptime and the configuration in force, with a rejected change's problems",
          description:
            "For operators: the version, the uptime, the generation of the configuration serving and when it loaded, and, when a change was rejected and an older configuration keeps serving, that change's problems with file (relative to the config directory), line and column — those in the caller's team's target groups, offers and API keys, in shared target groups and in the deployment's own files, never another team's (`/readyz` names no file); the rate limits in force; and `keys`, the caller's team's keys that still work but expire within 14 days, soonest first."
        })
      )
  )
  .annotateMerge(
    OpenApi.annotations({
      description: "The daemon's version, uptime and configuration in force, and the caller's keys about to expire."
    })
  )
  .middleware(Authorization) {}
