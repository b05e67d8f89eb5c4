/**
 * The engine the library benchmarks share: the built-in data and one target
 * group with institution criteria (eight countries, suffix rules accepted)
 * and the default email policy, plus an active offer on it, so every
 * benchmark measures the same validation. Two more groups (Asia-Pacific
 * universities; partner domains and patterns, no free mail) make offers of
 * two and three groups (`benchOffer`).
 */
import * as Schema from "effect/Schema"
import { EmailPolicy } from "../src/domain/TargetGroup.ts"
import { Engine } from "../src/engine/Engine.ts"
import type { InstitutionTable } from "../src/engine/institutions/InstitutionTable.ts"
import { loadBuiltInEmailLists } from "../src/engine/policy/EmailLists.ts"
import { makeEngineContext } from "../src/engine/targeting/EngineContext.ts"

export const BENCH_TARGET_GROUP = "bench"
export const BENCH_OFFER = "offer"

/** The active offer on the first `groups` of the benchmark's target groups (1: `BENCH_OFFER`). */
export const benchOffer = (groups: 1 | 2 | 3): string => (groups === 1 ? BENCH_OFFER : `offer-${groups}`)

/** The email policy a target group has when it sets none: every setting at its default. */
const email = Schema.decodeUnknownSync(EmailPolicy)({})
const groupIds = [BENCH_TARGET_GROUP, "bench-asia-pacific", "bench-partners"] as const
const offerOn = (groups: 1 | 2 | 3) => ({
  id: benchOffer(groups) as never,
  team: "bench" as never,
  name: groups === 1 ? "Bench" : `Bench (${groups} target groups)`,
  targetGroups: groupIds.slice(0, groups) as never,
  status: "active" as const
})

export const makeBenchEngine = (table: InstitutionTable): Engine =>
  Engine.make({
    context: makeEngineContext(table, loadBuiltInEmailLists()),
    targetGroups: [
      {
        id: BENCH_TARGET_GROUP as never,
        name: "Students in North America and Europe",
        criteria: {
          institutions: {
            countries: ["US", "CA", "GB", "DE", "FR", "ES", "IT", "NL"] as never,
            includeSuffixRules: true
          },
          email
        }
      },
      {
        id: groupIds[1] as never,
        name: "Universities in Asia-Pacific",
        criteria: {
          institutions: {
            types: ["university"],
            countries: ["JP", "CN", "KR", "AU", "NZ", "IN", "SG"] as never,
            includeSuffixRules: false
          },
          email
        }
      },
      {
        id: groupIds[2] as never,
        name: "Partner schools",
        criteria: {
          domains: { allow: ["samples.com", "partner.samples.com"], deny: [] },
          patterns: { allow: ["*.samples.edu"], deny: [] },
          email: { ...email, rejectFreeMail: true }
        }
      }
    ],
    offers: [offerOn(1), offerOn(2), offerOn(3)]
  })
