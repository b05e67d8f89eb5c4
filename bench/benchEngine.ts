/**
 * The engine the library benchmarks share: the built-in data and one target
 * group with institution criteria (eight countries, suffix rules accepted)
 * and the usual email policy, plus an active offer on it, so every
 * benchmark measures the same validation.
 */
import { Engine } from "../src/engine/Engine.ts"
import type { InstitutionTable } from "../src/engine/institutions/InstitutionTable.ts"
import { loadBuiltInEmailLists } from "../src/engine/policy/EmailLists.ts"
import { makeEngineContext } from "../src/engine/targeting/EngineContext.ts"

export const BENCH_TARGET_GROUP = "bench"
export const BENCH_OFFER = "offer"

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
          email: {
            rejectDisposable: true,
            rejectRoleAccounts: false,
            rejectFreeMail: false,
            rejectAbused: true,
            rejectConfusable: true,
            allowQuotedLocalPart: false,
            allowIpLiteral: false,
            allowSpecialUseDomains: false
          }
        }
      }
    ],
    offers: [
      {
        id: BENCH_OFFER as never,
        team: "bench" as never,
        name: "Bench",
        targetGroups: [BENCH_TARGET_GROUP as never],
        status: "active"
      }
    ]
  })
