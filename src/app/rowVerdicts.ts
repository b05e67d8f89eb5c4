/**
 * A job's rows as verdicts (`RowVerdict`: a row without its address), the
 * emails of one host sharing one: a job's million emails come from far
 * fewer hosts, and the verdict of an offer or a target group on an email
 * depends on its host alone, save for what is read from the local part. So
 * the first email of a host is evaluated in full (`evaluateOffer` /
 * `evaluateTargetGroup`, then the row) and the next ones of that host reuse
 * its verdict — and its text, written once (`SharedVerdict`) — after
 * parsing the email only. An email of the plain form whose domain, as it
 * is, is a host judged for the target is not even parsed: one pass checks
 * what parsing would (`acceptedPlainAt`) and finds the host in place
 * (measured, bench:jobs:batches against the parse, five alternating
 * rounds: warm passes 0.93 for the offer, 0.99 for the target group; the
 * first passes alike).
 *
 * An input the target's syntax refuses shares the verdict of its refusal
 * (see `byHost`). Evaluated in full, every time: a role account where a
 * group rejects them (the reason quotes the local part), an
 * internationalised domain (its look-alike check reads the Unicode form),
 * an offer not active at that instant, and, for an offer whose groups
 * parse differently, an input the strictest syntax refuses (`STRICTEST`).
 * test/app/rowVerdicts.test.ts holds the rows equal to
 * the full evaluation's over generated emails and hosts.
 *
 * Verdicts are kept by host (the domain as parsed, numbered once for all
 * targets: `HostNumbers`), per compiled target, and by the match a host is
 * judged on where every group judges it on that alone (`rowMatchOf`), so
 * that a new host of a known institution (`cs.x.edu` after `x.edu`) takes
 * its verdict without an evaluation, and the hosts of one institution share
 * one verdict object and its text (`Kept`). A repeated host then costs one
 * map look-up after parsing: neither the host directory's walk nor the
 * groups' judgements run again. Measured in one thread over the 1M emails
 * of bench:jobs' mix (~113k hosts), a warm pass: 1.7-1.9 µs an email
 * against 2.7-4.0 for a target group, 2.0-2.5 against 3.5-5.1 for the
 * three-group offer; before, only the listed domains' own hosts kept their
 * verdict (beside their facts), and the ~110k others shared a map of 4,096
 * that was emptied every few batches.
 */

import { effectiveStatus } from "../domain/Offer.ts"
import { type RowVerdict, toOfferResultRow, toResultRow } from "../domain/ResultRow.ts"
import { SharedVerdict } from "../domain/rowText.ts"
import { parseEmail } from "../engine/email/parseEmail.ts"
import { acceptedPlainAt, type PlainForms } from "../engine/email/plainAddress.ts"
import type { CompiledTargetGroup } from "../engine/targeting/compileTargetGroup.ts"
import type { EngineContext } from "../engine/targeting/EngineContext.ts"
import { type CompiledOffer, evaluateOffer } from "../engine/targeting/evaluateOffer.ts"
import {
  evaluateKnownEmail,
  evaluateTargetGroup,
  type KnownEmail,
  rowMatchOf
} from "../engine/targeting/evaluateTargetGroup.ts"
import type { HostFacts } from "../engine/targeting/HostDirectory.ts"
import { normalizedAddress, refusedAddress } from "../stats/UsageRecorder.ts"
import { HostNumbers } from "./HostNumbers.ts"

/**
 * Hosts whose verdicts the targets keep at most, and matches a target keeps
 * a verdict for: a job's million emails of bench:jobs' mix come from ~113k
 * hosts (listed domains, their sub-domains, academic-suffix and other
 * hosts) of ~39k matched domains, and as many distinct verdicts for a
 * target group or the three-group offer. Either is started afresh when
 * full, which bounds memory at no cost per hit: ~4.5 MB of hosts
 * (`HostNumbers`: their slots, text and ends, three typed arrays), and the
 * verdicts' text (~9 MB for that target group, ~14 MB for that offer, as
 * UTF-8 bytes outside the heap: `SharedVerdict`).
 */
const MAX_HOSTS = 1 << 17

/** This thread's numbered hosts. */
const hostNumbers = new HostNumbers(MAX_HOSTS)

/** How many hosts this thread keeps verdicts for, whatever the targets (for tests). */
export const keptHosts = (): number => hostNumbers.size

/**
 * What a target keeps (a compiled offer or target group, so a new
 * configuration starts afresh): each host's verdict by the host's number,
 * and each match's verdict, so that the hosts judged on one match (`x.edu`,
 * `stu.x.edu`, `mail.x.edu`) share one and its text is kept once.
 */
interface Kept {
  /** The `hostNumbers` generation `byHost` belongs to. */
  generation: number
  byHost: Array<SharedVerdict | undefined>
  /** The verdict of every host the target judges on its match alone (`rowMatchOf`), by the matched domain. */
  readonly byMatch: Map<string, MatchVerdict>
  /** The verdict on an input the target's syntax refuses, by the refusal's message (the parser's catalogue: a few dozen). */
  readonly refusals: Map<string, SharedVerdict>
}
/** A verdict on a match, with what the match is of (its entry, or its suffix rule), which its matched domain names. */
interface MatchVerdict {
  readonly of: object
  readonly verdict: SharedVerdict
}

/**
 * By context, then target: a team with reviewed institutions judges in a
 * context of its own (`Engine.contextFor`), where a host's verdict may
 * differ from the one shared by every other team.
 */
const kept = new WeakMap<EngineContext, WeakMap<CompiledOffer | CompiledTargetGroup, Kept>>()
const keptFor = (context: EngineContext, target: CompiledOffer | CompiledTargetGroup): Kept => {
  let byTarget = kept.get(context)
  if (byTarget === undefined) {
    byTarget = new WeakMap()
    kept.set(context, byTarget)
  }
  let found = byTarget.get(target)
  if (found === undefined) {
    found = { generation: -1, byHost: [], byMatch: new Map(), refusals: new Map() }
    byTarget.set(target, found)
  }
  return found
}

/** `kept`'s verdicts by number, emptied when the hosts were numbered afresh since. */
const byHostOf = (kept: Kept): Array<SharedVerdict | undefined> => {
  if (kept.generation !== hostNumbers.generation) {
    kept.byHost = []
    kept.generation = hostNumbers.generation
  }
  return kept.byHost
}

/**
 * Each numbered host's facts in a context (what its host directory answers
 * for the host), by number: a host judged for one target is not looked up
 * again for the next (a job of a target group, then one of an offer), nor
 * parsed again for its first evaluation (`KnownEmail`). Emptied, as the
 * targets' verdicts, when the hosts are numbered afresh; a new
 * configuration has a context of its own. The directory's walk was ~6% of
 * an offer's first pass after a target group's (perf, in process); measured
 * with `BENCH_ROUNDS=4 BENCH_BEFORE_TREE=<the code before> npm run
 * bench:jobs:batches` (one core, alternating): that first offer pass 0.90
 * (0.86-0.91) of the time before, a target group's first pass 0.95 (its
 * emails no longer parsed twice), warm passes alike.
 */
interface KnownFacts {
  generation: number
  byNumber: Array<HostFacts | undefined>
}
const knownFacts = new WeakMap<EngineContext, KnownFacts>()

/** The facts of host `number` (`host`) in `context`, looked up on first need. */
const factsOf = (context: EngineContext, number: number, host: string): HostFacts => {
  let known = knownFacts.get(context)
  if (known === undefined || known.generation !== hostNumbers.generation) {
    known = { generation: hostNumbers.generation, byNumber: [] }
    knownFacts.set(context, known)
  }
  let facts = known.byNumber[number]
  if (facts === undefined) {
    facts = context.hosts.facts(host)
    // Filled up to the number first, as `byHost` below.
    while (known.byNumber.length < number) known.byNumber.push(undefined)
    known.byNumber[number] = facts
  }
  return facts
}

/**
 * The verdict of a host not judged yet for the target of `groups`: host
 * `number`, of the email `input`, parsed under `syntax` as `parsed`. Where
 * every group judges it on its match alone (`rowMatchOf`), the verdict kept
 * for that match, else its evaluation in full (`full`), kept for the match;
 * else its own evaluation in full.
 *
 * In bench:jobs' mix, 73.7k of the 112.7k hosts take the verdict of a match
 * judged before, and 18 are judged on their own; before, each host was
 * evaluated in full and its verdict's text looked up among the kept ones
 * (~39k), which hashed every text. Measured against that, one core,
 * alternating: `BENCH_ROUNDS=4 BENCH_BEFORE_TREE=<before> npm run
 * bench:jobs:batches`, the first offer pass 0.81 (0.76-0.86) of the time
 * before and the first target-group pass 0.91 (0.74-0.99), warm passes
 * alike; `BENCH_RUNS=6 ... npm run bench:jobs:runs`, the cold offer job
 * 0.92 (0.75-1.04), a median of 4.17 s against 4.66 s, and the first job
 * 0.91 (0.71-1.00). The kept heap after the four passes in one thread grew
 * by 2.6 MB (132.0 against 129.4 MB: the matches' map).
 */
const hostVerdict = (
  context: EngineContext,
  groups: ReadonlyArray<CompiledTargetGroup>,
  kept: Kept,
  syntax: CompiledTargetGroup["syntax"],
  input: string,
  parsed: Extract<ReturnType<typeof parseEmail>, { ok: true }>,
  number: number,
  full: (i: number, input: string, known?: KnownEmail) => RowVerdict
): SharedVerdict => {
  const facts = factsOf(context, number, parsed.email.domain)
  const known = syntax === STRICTEST ? undefined : { syntax, parsed, facts }
  const match = rowMatchOf(groups, parsed.email, facts)
  if (match === undefined) return new SharedVerdict(full(-1, input, known))
  const of = match.kind === "suffix" ? match.rule : match.entry
  const found = kept.byMatch.get(match.matchedDomain)
  if (found?.of === of) return found.verdict
  const verdict = new SharedVerdict(full(-1, input, known))
  if (kept.byMatch.size >= MAX_HOSTS) kept.byMatch.clear()
  kept.byMatch.set(match.matchedDomain, { of, verdict })
  return verdict
}

/**
 * The syntax that accepts the fewest addresses (no quoted local part, no
 * address literal, no special-use domain): an address it accepts parses
 * alike under any options (they only accept more), so an offer whose
 * groups parse differently shares verdicts by host for such addresses
 * and evaluates the others in full.
 */
const STRICTEST: CompiledTargetGroup["syntax"] = Object.freeze({})

/**
 * Each email's verdict, shared by host where the rules above allow: `full`
 * evaluates one email in full (at index i, its address as usage counts it
 * given to `address` when asked for), `parsedAddress` receives the address of
 * one answered from its host, `refused` the index and input of one its
 * syntax refused, answered from its refusal's verdict.
 *
 * An input the syntax refuses (under every group of the target, so not under
 * `STRICTEST`) gets the row of its refusal alone (`formatRefused`: the
 * reason quotes the parser's message, never the input), so one verdict, and
 * its text, serves every input refused with the same message; usage counts
 * its address as `normalizedAddress` would (`refusedAddress`). In bench:jobs'
 * mix 8.6% of the emails do not parse; evaluated in full, each made its
 * groups' results and its row's text afresh. Measured with
 * `BENCH_ROUNDS=4 BENCH_BEFORE_TREE=<the code before> npm run bench:jobs:batches`
 * (one core, alternating): first passes 0.94 (target group) and 0.95 (offer)
 * of the time before, warm passes 0.90 and 0.89.
 */
const byHost = (
  context: EngineContext,
  groups: ReadonlyArray<CompiledTargetGroup>,
  emails: ReadonlyArray<string>,
  syntax: CompiledTargetGroup["syntax"],
  rejectsRoles: boolean,
  kept: Kept,
  read: PlainForms | undefined,
  full: (i: number, input: string, known?: KnownEmail) => RowVerdict,
  parsedAddress: (i: number, address: string) => void,
  refused: (i: number, input: string) => void
): Array<RowVerdict> => {
  const verdicts = new Array<RowVerdict>(emails.length)
  let byHost = byHostOf(kept)
  for (let i = 0; i < emails.length; i++) {
    const input = emails[i]!
    // An email of the plain form whose domain, as it is, is a host judged here parses, under any syntax, to that host
    // (`acceptedPlainAt`), so its verdict is the host's without parsing it again: its address is itself.
    const at = read === undefined ? acceptedPlainAt(input) : read.acceptedAt[i]!
    if (at > 0) {
      const number = hostNumbers.find(input, at + 1)
      const known = number < 0 ? undefined : byHost[number]
      if (known !== undefined && !(rejectsRoles && context.lists.isRoleAccount(input.slice(0, at)))) {
        verdicts[i] = known
        parsedAddress(i, input)
        continue
      }
    }
    const parsed = parseEmail(input, syntax)
    if (!parsed.ok && syntax !== STRICTEST) {
      let verdict = kept.refusals.get(parsed.message)
      if (verdict === undefined) {
        verdict = new SharedVerdict(full(i, input))
        kept.refusals.set(parsed.message, verdict)
      } else {
        refused(i, input)
      }
      verdicts[i] = verdict
      continue
    }
    if (
      !parsed.ok ||
      parsed.email.isInternational ||
      (rejectsRoles && context.lists.isRoleAccount(parsed.email.localPart))
    ) {
      verdicts[i] = full(i, input)
      continue
    }
    const host = parsed.email.domain
    let number = hostNumbers.find(host)
    let verdict = number < 0 ? undefined : byHost[number]
    if (verdict === undefined) {
      if (number < 0) {
        number = hostNumbers.add(host)
        byHost = byHostOf(kept)
      }
      verdict =
        number < 0
          ? new SharedVerdict(full(-1, input))
          : hostVerdict(context, groups, kept, syntax, input, parsed, number, full)
      if (number >= 0) {
        // Filled up to the number first: an array with holes, or made with `new Array(length)` of this
        // many, would be a dictionary, each probe ~1.6x as long (measured: a warm pass of bench:jobs' mix).
        while (byHost.length < number) byHost.push(undefined)
        byHost[number] = verdict
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
 * email's normalised address (what the usage statistics count); `read`:
 * their plain forms, read already.
 */
export const offerRowVerdicts = (
  compiled: CompiledOffer,
  context: EngineContext,
  emails: ReadonlyArray<string>,
  at: number,
  read?: PlainForms | undefined
): OfferRowVerdicts => {
  const addresses = new Array<string | undefined>(emails.length)
  /** In full; at an index (not -1), its address too. */
  const full = (i: number, input: string, known?: KnownEmail): RowVerdict => {
    const result = evaluateOffer(compiled, context, input, at, known)
    if (i >= 0) addresses[i] = normalizedAddress(input, result)
    return toOfferResultRow(input, result)
  }
  const groups = compiled.groups
  let syntax = groups[0]?.syntax
  let rejectsRoles = false
  for (const group of groups) {
    // Groups that parse differently: an email the strictest syntax accepts parses alike under every group's.
    if (group.syntax !== syntax) syntax = STRICTEST
    if (group.policy.rejectRoleAccounts) rejectsRoles = true
  }
  if (syntax === undefined || effectiveStatus(compiled.offer, at) !== "active") {
    return { verdicts: emails.map((email, i) => full(i, email)), addresses }
  }
  const verdicts = byHost(
    context,
    groups,
    emails,
    syntax,
    rejectsRoles,
    keptFor(context, compiled),
    read,
    full,
    (i, address) => {
      addresses[i] = address
    },
    (i, input) => {
      addresses[i] = refusedAddress(input)
    }
  )
  return { verdicts, addresses }
}

/** The verdicts of `emails` against the target group `group`, in order; `read`: their plain forms, read already. */
export const targetGroupRowVerdicts = (
  group: CompiledTargetGroup,
  context: EngineContext,
  emails: ReadonlyArray<string>,
  read?: PlainForms | undefined
): Array<RowVerdict> =>
  byHost(
    context,
    [group],
    emails,
    group.syntax,
    group.policy.rejectRoleAccounts,
    keptFor(context, group),
    read,
    (_, input, known) =>
      toResultRow(
        input,
        known === undefined
          ? evaluateTargetGroup(group, context, input)
          : evaluateKnownEmail(group, context, input, known)
      ),
    () => {},
    () => {}
  )
