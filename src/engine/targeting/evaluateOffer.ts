/**
 * One email against an offer: eligible when any of its target groups
 * matches. The email is parsed and its host looked up once, then each group
 * judges those facts: an offer of three groups costs little more than one. A non-active offer (draft, scheduled, paused, expired, archived)
 * gives a failed result with `OFFER_NOT_ACTIVE`, not an error.
 */
import { effectiveStatus, type Offer } from "../../domain/Offer.ts"
import type { ReasonCode } from "../../domain/ReasonCode.ts"
import type { OfferValidationResult, ValidationResult } from "../../domain/ValidationResult.ts"
import { parseEmail } from "../email/parseEmail.ts"
import type { CompiledTargetGroup } from "./compileTargetGroup.ts"
import type { EngineContext } from "./EngineContext.ts"
import { formatRefused, judgeEmail, lookalikeOf } from "./evaluateTargetGroup.ts"
import type { HostFacts } from "./HostDirectory.ts"

export interface CompiledOffer {
  readonly offer: Offer
  readonly groups: ReadonlyArray<CompiledTargetGroup>
}

export const evaluateOffer = (
  compiled: CompiledOffer,
  context: EngineContext,
  input: string,
  now: number
): OfferValidationResult => {
  const { offer } = compiled
  const status = effectiveStatus(offer, now)
  const ref = { id: offer.id, name: offer.name, status }
  if (status !== "active") {
    return {
      isValid: false,
      email: input,
      offer: ref,
      matchedTargetGroups: [],
      results: [],
      reasonCode: "OFFER_NOT_ACTIVE",
      reason: `The offer "${offer.name}" is ${status}, not active.`
    }
  }
  const results: Array<ValidationResult> = []
  const matched: Array<string> = []
  // The email is parsed, and its host looked up, once for the groups that parse alike (almost always all).
  let syntax: CompiledTargetGroup["syntax"] | undefined
  let parsed: ReturnType<typeof parseEmail> | undefined
  let facts: HostFacts | undefined
  let lookalike: ReturnType<typeof lookalikeOf> = null
  for (const group of compiled.groups) {
    if (group.syntax !== syntax) {
      syntax = group.syntax
      parsed = parseEmail(input, syntax)
      if (parsed.ok) {
        facts = context.hosts.facts(parsed.email.domain)
        lookalike = lookalikeOf(parsed.email)
      }
    }
    const result = parsed!.ok
      ? judgeEmail(group, context, input, parsed!.email, facts!, lookalike)
      : formatRefused(group, input, parsed!)
    results.push(result)
    if (result.isValid) matched.push(group.ref.id)
  }
  if (matched.length > 0) return { isValid: true, email: input, offer: ref, matchedTargetGroups: matched, results }
  const first = results[0]!
  const sameReason = results.every((r) => r.reasonCode === first.reasonCode)
  const reasonCode: ReasonCode =
    sameReason && first.reasonCode !== undefined ? first.reasonCode : "NO_TARGET_GROUP_MATCHED"
  const reason =
    results.length === 1 || sameReason
      ? (first.reason ?? "No target group matched.")
      : `No target group of the offer matched: ${results.map((r) => `${r.targetGroup.id}: ${r.reason}`).join(" ")}`
  return { isValid: false, email: input, offer: ref, matchedTargetGroups: [], results, reasonCode, reason }
}
