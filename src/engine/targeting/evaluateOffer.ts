/**
 * One email against an offer: eligible when any of its target groups
 * matches. The email is parsed and its host looked up once, then each group
 * judges those facts (`judgeEmail`): an offer of three groups costs little
 * more than one (measured: `npm run bench:offers`). The answer is the one
 * each group's own `evaluateTargetGroup` would give, combined
 * (property-tested against that composition, bench/perGroupOffer.ts:
 * test/engine/targeting/evaluateOffer.test.ts).
 * A non-active offer (draft, scheduled, paused, expired, archived) gives a
 * failed result with `OFFER_NOT_ACTIVE`, not an error.
 */
import { type EffectiveOfferStatus, effectiveStatus, type Offer } from "../../domain/Offer.ts"
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { OfferValidationResult, ValidationResult } from "../../domain/ValidationResult.ts"
import { type AddressParse, isFormatFailure, parseAddress } from "../email/parseEmail.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import type { EngineContext } from "./EngineContext.ts"
import { formatRefused, judgeEmail, type KnownEmail, lookalikeOf } from "./evaluateTargetGroup.ts"
import type { HostFacts } from "./HostDirectory.ts"

export interface CompiledOffer {
  readonly offer: Offer
  readonly groups: ReadonlyArray<CompiledTargetGroup>
}

/** One email against an offer at `now`; `known`: what the caller knows of it already, used for the groups of its syntax. */
export const evaluateOffer = (
  compiled: CompiledOffer,
  context: EngineContext,
  input: string,
  now: number,
  known?: KnownEmail
): OfferValidationResult => {
  const { offer } = compiled
  const status = effectiveStatus(offer, now)
  if (status !== "active") return notActive(offer, status, input)
  const groups = compiled.groups
  const results: Array<ValidationResult> = []
  // The email is parsed, and its host looked up, once for the groups that parse alike (almost always all:
  // groups share one syntax-options object per combination, see `compileTargetGroup.ts`).
  let syntax: CompiledTargetGroup["syntax"] | undefined
  let parsed: AddressParse | undefined
  let facts: HostFacts | undefined
  let lookalike: ReturnType<typeof lookalikeOf> = null
  for (let i = 0; i < groups.length; i++) {
    const group = groups[i]!
    if (group.syntax !== syntax) {
      syntax = group.syntax
      parsed = known?.syntax === syntax ? known.parsed.email : parseAddress(input, syntax)
      if (!isFormatFailure(parsed)) {
        facts = known?.syntax === syntax ? known.facts : context.hosts.facts(parsed.domain)
        lookalike = lookalikeOf(parsed)
      }
    }
    results.push(
      isFormatFailure(parsed!)
        ? formatRefused(group, input, parsed)
        : judgeEmail(group, context, input, parsed!, facts!, lookalike)
    )
  }
  return offerVerdict(offer, input, results)
}

/** The answer for an offer that is not active at the moment asked. */
const notActive = (offer: Offer, status: EffectiveOfferStatus, input: string): OfferValidationResult => ({
  isValid: false,
  email: input,
  offer: { id: offer.id, name: offer.name, status },
  matchedTargetGroups: [],
  results: [],
  reasonCode: "OFFER_NOT_ACTIVE",
  reason: `The offer "${offer.name}" is ${status}, not active.`
})

/**
 * An active offer's answer from its groups' results, in the offer's order:
 * eligible when any matched; otherwise the reason all groups share, or each
 * group's reason (`eachGroupsReason`).
 */
const offerVerdict = (offer: Offer, input: string, results: Array<ValidationResult>): OfferValidationResult => {
  const ref = { id: offer.id, name: offer.name, status: "active" as const }
  const matched: Array<string> = []
  for (let i = 0; i < results.length; i++) if (results[i]!.isValid) matched.push(results[i]!.targetGroup.id)
  if (matched.length > 0) return { isValid: true, email: input, offer: ref, matchedTargetGroups: matched, results }
  const first = results[0]!
  let sameReason = true
  for (let i = 1; i < results.length && sameReason; i++) sameReason = results[i]!.reasonCode === first.reasonCode
  const reasonCode: ReasonCode =
    sameReason && first.reasonCode !== undefined ? first.reasonCode : "NO_TARGET_GROUP_MATCHED"
  const reason =
    results.length === 1 || sameReason ? (first.reason ?? "No target group matched.") : eachGroupsReason(results)
  return { isValid: false, email: input, offer: ref, matchedTargetGroups: matched, results, reasonCode, reason }
}

/**
 * Why no group matched, group by group in the offer's order, each distinct
 * reason stated once after the groups that gave it: "No target group of the
 * offer matched: universities, acme-bavaria: x.com is not a known academic
 * institution. eu-students: ...". Groups often refuse a host for the same
 * reason (it is no institution), and a job writes this text in every row.
 * Concatenated, not joined: the parts stay shared until the answer is
 * written (measured: npm run bench:offers).
 */
const eachGroupsReason = (results: ReadonlyArray<ValidationResult>): string => {
  let reason = "No target group of the offer matched:"
  for (let i = 0; i < results.length; i++) {
    const text = results[i]!.reason
    let stated = false
    for (let j = 0; j < i && !stated; j++) stated = results[j]!.reason === text
    if (stated) continue
    const ids = [results[i]!.targetGroup.id]
    for (let j = i + 1; j < results.length; j++) {
      const id = results[j]!.targetGroup.id
      if (results[j]!.reason === text && !ids.includes(id)) ids.push(id)
    }
    reason += ` ${ids.join(", ")}: ${text}`
  }
  return reason
}
