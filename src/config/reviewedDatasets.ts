/**
 * The reviewed dataset: institutions an operator approved from the review
 * queue, for one team each, kept as YAML to review in git —
 * `datasets/reviewed.yaml` in the config directory, or `reviewed.yaml` in
 * the data directory where the config directory is read-only — and, with
 * the Redis store, as a document the store hands the loader. The shape is
 * a user YAML dataset's (`name, domains, country, region, type`) plus
 * `role` and the review's fields (`team, approvedBy, approvedAt`). Read
 * here with positions, like every config file: a bad entry is a problem
 * with its file, line and column.
 */
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { stringify } from "yaml"
import { CountryCode } from "../domain/Country.ts"
import type { ConfigurationProblem } from "../domain/errors.ts"
import { TeamId } from "../domain/Identifiers.ts"
import { HostRole, InstitutionType } from "../domain/Institution.ts"
import type { ReviewedInstitution } from "../domain/InstitutionReview.ts"
import { RegionCode } from "../domain/Region.ts"
import { DomainName } from "../domain/TargetGroup.ts"
import { displayPath } from "./layout.ts"
import { problemAt, type SourceFile } from "./references.ts"
import { decodeYaml } from "./yamlDecode.ts"

/** The reviewed dataset in the config directory. */
export const REVIEWED_CONFIG_FILE = join("datasets", "reviewed.yaml")
/** The reviewed dataset in the data directory (where the config directory is read-only). */
export const REVIEWED_DATA_FILE = "reviewed.yaml"

/** One entry of the file: an approved institution (one domain, as the API writes it; several are allowed). */
export const ReviewedEntry = Schema.Struct({
  name: Schema.NonEmptyString,
  domains: Schema.Array(DomainName).pipe(Schema.check(Schema.isMinLength(1))),
  country: Schema.NullOr(CountryCode).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null))),
  region: Schema.NullOr(RegionCode).pipe(Schema.withDecodingDefaultKey(Effect.succeed(null))),
  type: InstitutionType,
  role: Schema.optionalKey(HostRole),
  team: TeamId,
  approvedBy: Schema.String,
  approvedAt: Schema.String
})
export type ReviewedEntry = typeof ReviewedEntry.Type

export const ReviewedFile = Schema.Array(ReviewedEntry)

/** The key of an approval: its team and domain. */
export const reviewedKey = (team: string, domain: string): string => `${team}/${domain}`

/** A file's entries as approvals, one per domain. */
export const approvalsOf = (entries: ReadonlyArray<ReviewedEntry>): Array<ReviewedInstitution> =>
  entries.flatMap((entry) =>
    entry.domains.map(
      (domain) =>
        ({
          domain,
          team: entry.team,
          name: entry.name,
          type: entry.type,
          country: entry.country,
          region: entry.region,
          ...(entry.role === undefined ? {} : { role: entry.role }),
          approvedBy: entry.approvedBy,
          approvedAt: entry.approvedAt
        }) as ReviewedInstitution
    )
  )

const HEADER = `# Institutions approved from the review queue (campusgate review, or POST
# /api/v1/institution-reviews/{domain}/approve), each for one team.
# Review and commit this file like any other configuration change.
`

/** The reviewed dataset's text: one entry per domain, in team and domain order. */
export const reviewedYaml = (approvals: ReadonlyArray<ReviewedInstitution>): string => {
  const sorted = [...approvals].sort((a, b) => (reviewedKey(a.team, a.domain) < reviewedKey(b.team, b.domain) ? -1 : 1))
  if (sorted.length === 0) return `${HEADER}[]\n`
  const entries = sorted.map((approval) => ({
    name: approval.name,
    domains: [approval.domain],
    country: approval.country,
    region: approval.region,
    type: approval.type,
    ...(approval.role === undefined ? {} : { role: approval.role }),
    team: approval.team,
    approvedBy: approval.approvedBy,
    approvedAt: approval.approvedAt
  }))
  return `${HEADER}${stringify(entries)}`
}

/** A reviewed dataset's approvals; its problems (with positions, teams checked) added to `problems`. */
export const decodeReviewed = (
  file: SourceFile,
  teams: ReadonlySet<string> | undefined,
  problems: Array<ConfigurationProblem>
): Array<ReviewedInstitution> => {
  const decoded = decodeYaml(ReviewedFile, displayPath(file.path), file.text, { empty: [] })
  if (!decoded.ok) {
    problems.push(...decoded.problems)
    return []
  }
  let fine = true
  decoded.value.forEach((entry, i) => {
    if (teams !== undefined && !teams.has(entry.team)) {
      fine = false
      problems.push(problemAt(file, [i, "team"], `team "${entry.team}" is not declared in campusgate.yaml`))
    }
  })
  return fine ? approvalsOf(decoded.value) : []
}

/**
 * Every approval of the files and the store's documents, one per team and
 * domain: the later source wins (config directory, data directory, store),
 * and what the store rejected since is left out.
 */
export const mergeReviewed = (
  sources: ReadonlyArray<ReadonlyArray<ReviewedInstitution>>,
  rejected: ReadonlySet<string> = new Set()
): Array<ReviewedInstitution> => {
  const byKey = new Map<string, ReviewedInstitution>()
  for (const approvals of sources)
    for (const approval of approvals) byKey.set(reviewedKey(approval.team, approval.domain), approval)
  for (const key of rejected) byKey.delete(key)
  return [...byKey.values()]
}

/**
 * The reviewed institutions in force: the config directory's and the data
 * directory's files, then the store's approvals (Redis), less the store's
 * rejections. The files are the team's to fix (an undeclared team is a
 * problem, where `checkTeams`); the store's approvals of a team no longer
 * declared are left out, so removing a team does not stop the
 * configuration from loading.
 */
export const readReviewed = (
  configDir: string,
  dataDir: string,
  stored: {
    readonly reviewed?: ReadonlyArray<{ readonly location: string; readonly text: string }> | undefined
    readonly reviewedRejected?: ReadonlyArray<string> | undefined
  },
  teams: ReadonlySet<string>,
  checkTeams: boolean,
  problems: Array<ConfigurationProblem>
): Array<ReviewedInstitution> => {
  const files = [join(configDir, REVIEWED_CONFIG_FILE), join(dataDir, REVIEWED_DATA_FILE)].flatMap((path) =>
    existsSync(path) ? [{ store: "config" as const, path, text: readFileSync(path, "utf8") }] : []
  )
  return mergeReviewed(
    [
      ...files.map((file) => decodeReviewed(file, checkTeams ? teams : undefined, problems)),
      ...(stored.reviewed ?? []).map(({ location, text }) =>
        decodeReviewed({ store: "data", path: location, text }, undefined, problems).filter((approval) =>
          teams.has(approval.team)
        )
      )
    ],
    new Set(stored.reviewedRejected ?? [])
  )
}
