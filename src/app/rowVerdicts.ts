/**
 * A job's rows as verdicts (`RowVerdict`: a row without its address), the
 * emails of one host sharing one: a job's million emails come from far
 * fewer hosts, and the verdict of an offer or a target group on an email
 * depends on its host alone, save for what is read from the local part. So
 * the first email of a host is evaluated in full (`evaluateOffer` /
 * `evaluateTargetGroup`, then the row) and the next ones of that host reuse
 * its verdict — and its text, written once (`SharedVerdict`) — after
 * parsing the email only.
 *
 * Evaluated in full, every time: an input that does not parse, a role
 * account where a group rejects them (the reason quotes the local part), an
 * internationalised domain (its look-alike check reads the Unicode form),
 * an offer not active at that instant, an offer whose groups parse
 * differently. test/app/rowVerdicts.test.ts holds the rows equal to
 * the full evaluation's over generated emails and hosts.
 *
 * A host that is a key of the host directory keeps the verdict beside its
 * facts (`HostDirectory.memo`, owned by the compiled target: no map of its
 * own, bounded by the directory's keys and the owners it keeps); any other
 * host (under a listed domain, or unknown) in a small map per target,
 * started afresh when full. Measured after a 1M-email offer job of
 * bench:jobs' mix (~48k hosts, in-process, heap after GC): 15-21 MB more
 * per job thread than evaluating every email in full.
 */

import { effectiveStatus } from "../domain/Offer.ts"
import { type RowVerdict, SharedVerdict, toOfferResultRow, toResultRow } from "../domain/ResultRow.ts"
import { parseEmail } from "../engine/email/parseEmail.ts"
import type { CompiledTargetGroup } from "../engine/targeting/compileTargetGroup.ts"
import type { EngineContext } from "../engine/targeting/EngineContext.ts"
import { type CompiledOffer, evaluateOffer } from "../engine/targeting/evaluateOffer.ts"
import { evaluateTargetGroup } from "../engine/targeting/evaluateTargetGroup.ts"
import { normalizedAddress } from "../stats/UsageRecorder.ts"

/** Verdicts of hosts that are not keys of the host directory, kept per target: at most this many. */
const OTHER_HOSTS = 4096

/**
 * What a target's verdicts are kept by: a compiled offer, or a token of its
 * own per compiled target group (whose own slot beside the facts holds its
 * verdict on the institution, `judgeHost`); and its other hosts' verdicts.
 */
interface Kept {
  readonly owner: object
  readonly others: Map<string, RowVerdict>
}
const kept = new WeakMap<CompiledOffer | CompiledTargetGroup, Kept>()
const keptFor = (target: CompiledOffer | CompiledTargetGroup, ownToken: boolean): Kept => {
  let found = kept.get(target)
  if (found === undefined) {
    found = { owner: ownToken ? {} : target, others: new Map() }
    kept.set(target, found)
  }
  return found
}

/**
 * Each email's verdict, shared by host where the rules above allow: `full`
 * evaluates one email in full (at index i, its address as usage counts it
 * given to `address` when asked for), `parsedAddress` receives the address of
 * one answered from its host.
 */
const byHost = (
  context: EngineContext,
  emails: ReadonlyArray<string>,
  syntax: CompiledTargetGroup["syntax"],
  rejectsRoles: boolean,
  { owner, others }: Kept,
  full: (i: number, input: string) => RowVerdict,
  parsedAddress: (i: number, address: string) => void
): Array<RowVerdict> => {
  const verdicts = new Array<RowVerdict>(emails.length)
  const hosts = context.hosts
  for (let i = 0; i < emails.length; i++) {
    const input = emails[i]!
    const parsed = parseEmail(input, syntax)
    if (
      !parsed.ok ||
      parsed.email.isInternational ||
      (rejectsRoles && context.lists.isRoleAccount(parsed.email.localPart))
    ) {
      verdicts[i] = full(i, input)
      continue
    }
    const host = parsed.email.domain
    const facts = hosts.facts(host)
    let verdict: RowVerdict | undefined
    if (hosts.isOneHost(facts)) {
      // The facts stand for this host alone: what is kept beside them is this host's verdict.
      verdict = hosts.memo(facts, owner, () => new SharedVerdict(full(-1, input)))
    } else {
      verdict = others.get(host)
      if (verdict === undefined) {
        verdict = new SharedVerdict(full(-1, input))
        if (others.size >= OTHER_HOSTS) others.clear()
        others.set(host, verdict)
      }
    }
    verdicts[i] = verdict
    parsedAddress(i, parsed.email.address)
  }
  return verdicts
}

export interface OfferRowVerdicts {
  /** One per email, in order. */
  readonly verdicts: Array<RowVerdict>
  /** Each email's normalised address, as usage counts it (undefined: not an address). */
  readonly addresses: Array<string | undefined>
}

/**
 * The verdicts of `emails` against `compiled` at `at`, in order, and each
 * email's normalised address (what the usage statistics count).
 */
export const offerRowVerdicts = (
  compiled: CompiledOffer,
  context: EngineContext,
  emails: ReadonlyArray<string>,
  at: number
): OfferRowVerdicts => {
  const addresses = new Array<string | undefined>(emails.length)
  /** In full; at an index (not -1), its address too. */
  const full = (i: number, input: string): RowVerdict => {
    const result = evaluateOffer(compiled, context, input, at)
    if (i >= 0) addresses[i] = normalizedAddress(input, result)
    return toOfferResultRow(input, result)
  }
  const groups = compiled.groups
  const syntax = groups[0]?.syntax
  let oneSyntax = syntax !== undefined
  let rejectsRoles = false
  for (const group of groups) {
    if (group.syntax !== syntax) oneSyntax = false
    if (group.policy.rejectRoleAccounts) rejectsRoles = true
  }
  if (!oneSyntax || effectiveStatus(compiled.offer, at) !== "active") {
    return { verdicts: emails.map((email, i) => full(i, email)), addresses }
  }
  const verdicts = byHost(context, emails, syntax!, rejectsRoles, keptFor(compiled, false), full, (i, address) => {
    addresses[i] = address
  })
  return { verdicts, addresses }
}

/** The verdicts of `emails` against the target group `group`, in order. */
export const targetGroupRowVerdicts = (
  group: CompiledTargetGroup,
  context: EngineContext,
  emails: ReadonlyArray<string>
): Array<RowVerdict> =>
  byHost(
    context,
    emails,
    group.syntax,
    group.policy.rejectRoleAccounts,
    keptFor(group, true),
    (_, input) => toResultRow(input, evaluateTargetGroup(group, context, input)),
    () => {}
  )
