/**
 * A team's reviewed institutions (`domain/InstitutionReview.ts`: domains an
 * operator approved from the review queue) over the shared host directory:
 * a host at or below an approved domain is that institution, for the
 * team's targets only; every other host is answered by the shared
 * directory, with what it has learned. The approved domains are few, so
 * they live in a table of their own (`InstitutionTable.fromData`), each
 * fact's evidence naming who approved it and when, with high confidence:
 * a person looked.
 */
import type { ReviewedInstitution } from "../../domain/InstitutionReview.ts"
import { type EvidenceRow, type InstitutionRow, institutionsDataFormat } from "../institutions/InstitutionsData.ts"
import { InstitutionTable } from "../institutions/InstitutionTable.ts"
import type { EngineContext, HostFactsSource } from "./EngineContext.ts"
import type { HostFacts } from "./HostDirectory.ts"

/** The dataset name every reviewed institution's source carries. */
export const reviewedDataset = "campusgate-reviewed"

/** The approvals as compiled institution data: one institution per domain. */
const reviewedTable = (entries: ReadonlyArray<ReviewedInstitution>): InstitutionTable => {
  const evidence: Array<EvidenceRow> = []
  const institutions: Array<InstitutionRow> = []
  const roles: Array<readonly [string, "student" | "staff" | "alumni"]> = []
  for (const entry of entries) {
    const at = evidence.length
    evidence.push([reviewedDataset, `approved-by:${entry.approvedBy}@${entry.approvedAt}`, "high"])
    institutions.push([
      entry.domain,
      entry.name,
      entry.country,
      entry.country === null ? null : "dataset",
      entry.region,
      entry.type,
      [0],
      [entry.domain],
      [],
      null,
      [at, at, entry.country === null ? -1 : at, entry.region === null ? -1 : at]
    ])
    if (entry.role !== undefined && entry.role !== "mixed") roles.push([entry.domain, entry.role])
  }
  return InstitutionTable.fromData({
    format: institutionsDataFormat,
    sources: [{ dataset: reviewedDataset }],
    evidence,
    institutions,
    deny: [],
    abused: [],
    roles,
    nonInstitutions: [],
    suffixRules: []
  })
}

/** Facts for the hosts at or below approved domains, over the shared directory's for the rest. */
class ReviewedHostFacts implements HostFactsSource {
  readonly #shared: EngineContext["hosts"]
  readonly #table: InstitutionTable
  readonly #lists: EngineContext["lists"]
  /** The facts of the approved hosts met, by host (few: the approved domains and their hosts). */
  readonly #known = new Map<string, HostFacts>()

  constructor(shared: EngineContext, table: InstitutionTable) {
    this.#shared = shared.hosts
    this.#lists = shared.lists
    this.#table = table
  }

  facts(host: string): HostFacts {
    const known = this.#known.get(host)
    if (known !== undefined) return known
    const match = this.#table.lookup(host)
    if (match.kind !== "listed") return this.#shared.facts(host)
    const facts: HostFacts = {
      match,
      matchKind: "listed",
      matchedDomain: match.matchedDomain,
      abused: false,
      disposable: this.#lists.isDisposable(host),
      freeMail: this.#lists.isFreeMail(host)
    }
    if (this.#known.size >= 10_000) this.#known.clear()
    this.#known.set(host, facts)
    return facts
  }

  memo<O extends object, A>(facts: HostFacts, owner: O, derive: (owner: O, facts: HostFacts) => A): A {
    return this.#shared.memo(facts, owner, derive)
  }
}

/**
 * The context of each team with approvals: the shared context with the
 * team's reviewed institutions over its hosts. Teams without any use the
 * shared context itself.
 */
export const reviewedContexts = (
  shared: EngineContext,
  reviewed: ReadonlyArray<ReviewedInstitution>
): ReadonlyMap<string, EngineContext> => {
  const byTeam = new Map<string, Array<ReviewedInstitution>>()
  for (const entry of reviewed) {
    const list = byTeam.get(entry.team)
    if (list === undefined) byTeam.set(entry.team, [entry])
    else list.push(entry)
  }
  const contexts = new Map<string, EngineContext>()
  for (const [team, entries] of byTeam) {
    contexts.set(team, { ...shared, hosts: new ReviewedHostFacts(shared, reviewedTable(entries)) })
  }
  return contexts
}
