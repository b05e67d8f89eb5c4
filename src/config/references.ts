/**
 * The cross-references of a configuration: every team a target group, offer
 * or API key names is declared, and every target group an offer names
 * exists and is visible to the offer's team.
 *
 * They are checked for every file, including one that failed to decode: its
 * references are read from what the file says (`rawDocument`), so a typo in
 * a status does not hide a misspelt target group in the same file. A
 * reference whose own field already has a problem is not reported twice,
 * nor one to a target group that failed to decode, nor a team while the
 * teams themselves cannot be read.
 */
import type { ConfigurationProblem } from "../domain/errors.ts"
import type { TargetGroup } from "../domain/TargetGroup.ts"
import { targetGroupVisible } from "../domain/visibility.ts"
import { didYouMean } from "./didYouMean.ts"
import { displayPath, SETTINGS_FILE } from "./layout.ts"
import { positionOf } from "./yamlDecode.ts"

/** A file a resource was read from. */
export interface SourceFile {
  readonly store: "config" | "data"
  /** Absolute path. */
  readonly path: string
  readonly text: string
}

/** What one target group, offer or API key refers to, and where it is written. */
export interface References {
  readonly file: SourceFile
  /** The path of the item within its file (`keys[2]` for an API key). */
  readonly at: ReadonlyArray<PropertyKey>
  readonly team: string | undefined
  /** An offer's target groups by position; undefined where an entry cannot be read. */
  readonly targetGroups: ReadonlyArray<string | undefined>
}

/** `keys[2].team`: a path as problems show it. */
export const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join("")

export const problemAt = (
  file: SourceFile,
  path: ReadonlyArray<PropertyKey>,
  message: string
): ConfigurationProblem => ({
  file: displayPath(file.path),
  ...positionOf(file.text, path),
  path: pathText(path),
  message
})

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * The references an item that failed to decode still makes: `raw` is what
 * its file says there, `reported` the problems its decoding found (a field
 * with a problem of its own is left out).
 */
export const rawReferences = (
  file: SourceFile,
  at: ReadonlyArray<PropertyKey>,
  raw: unknown,
  reported: ReadonlyArray<ConfigurationProblem>
): References => {
  const shown = displayPath(file.path)
  const hasProblem = (path: ReadonlyArray<PropertyKey>): boolean => {
    const text = pathText([...at, ...path])
    return reported.some((problem) => problem.file === shown && (problem.path === text || problem.path === ""))
  }
  const item = isRecord(raw) ? raw : {}
  const team = typeof item.team === "string" && !hasProblem(["team"]) ? item.team : undefined
  const groups = Array.isArray(item.targetGroups) && !hasProblem(["targetGroups"]) ? item.targetGroups : []
  return {
    file,
    at,
    team,
    targetGroups: groups.map((id, i) => (typeof id === "string" && !hasProblem(["targetGroups", i]) ? id : undefined))
  }
}

export interface ReferenceContext {
  /** The teams that may be named; undefined when campusgate.yaml cannot be read (no team is checked). */
  readonly teams: ReadonlySet<string> | undefined
  readonly targetGroups: ReadonlyMap<string, { readonly value: TargetGroup }>
  /** Ids of target groups whose files failed to decode: references to them are not dangling. */
  readonly brokenTargetGroups: ReadonlySet<string>
}

/** The problems of the teams `items` name. */
export const checkTeams = (
  context: ReferenceContext,
  items: ReadonlyArray<References>,
  problems: Array<ConfigurationProblem>
): void => {
  const teams = context.teams
  if (teams === undefined) return
  for (const item of items) {
    if (item.team === undefined || teams.has(item.team)) continue
    problems.push(
      problemAt(
        item.file,
        [...item.at, "team"],
        `unknown team "${item.team}"${didYouMean(item.team, teams)}: declare it under teams in ${SETTINGS_FILE} (known: ${[...teams].join(", ")})`
      )
    )
  }
}

/** The problems of the target groups `offers` name: present, and visible to the offer's team. */
export const checkTargetGroups = (
  context: ReferenceContext,
  offers: ReadonlyArray<References>,
  problems: Array<ConfigurationProblem>
): void => {
  for (const offer of offers) {
    offer.targetGroups.forEach((groupId, i) => {
      if (groupId === undefined) return
      const group = context.targetGroups.get(groupId)
      const at = [...offer.at, "targetGroups", i]
      if (group === undefined) {
        if (context.brokenTargetGroups.has(groupId)) return
        const known = [...context.targetGroups.keys()]
        const hint = didYouMean(groupId, known)
        problems.push(
          problemAt(offer.file, at, `no target group "${groupId}"${hint || ` (known: ${known.join(", ") || "none"})`}`)
        )
      } else if (offer.team !== undefined && !targetGroupVisible(group.value, offer.team)) {
        problems.push(
          problemAt(
            offer.file,
            at,
            `target group "${groupId}" belongs to team "${group.value.team}", not to this offer's team "${offer.team}"`
          )
        )
      }
    })
  }
}
