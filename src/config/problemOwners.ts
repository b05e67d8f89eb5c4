/**
 * Whom each problem of a rejected configuration concerns, so that a team is
 * shown its own (`domain/visibility.ts` `problemVisible`): the team of the
 * target group or offer its file holds, or of the API key its path is in;
 * none for a shared target group or the deployment's own files.
 */
import type { ConfigurationProblem } from "../domain/errors.ts"
import { displayPath } from "./layout.ts"
import type { SourceFile } from "./references.ts"
import { rawDocument, rawStringField } from "./yamlDecode.ts"

/**
 * Each problem with the team it concerns (`team`): the team of the target
 * group or offer its file holds, or of the API key its path is in; none for
 * a shared target group or the deployment's own files, which concern every
 * team. What a team is shown of a rejected change (`domain/visibility.ts`).
 */
export const withOwners = (
  problems: ReadonlyArray<ConfigurationProblem>,
  resourceFiles: ReadonlyArray<SourceFile>,
  keyFiles: ReadonlyArray<SourceFile>
): Array<ConfigurationProblem> => {
  const resourceTeams = new Map<string, string | undefined>()
  for (const file of resourceFiles) resourceTeams.set(displayPath(file.path), rawStringField(file.text, "team"))
  const keyEntries = new Map<string, unknown>()
  for (const file of keyFiles) keyEntries.set(displayPath(file.path), rawDocument(file.text))
  const teamOf = (problem: ConfigurationProblem): string | undefined => {
    if (problem.file === undefined) return undefined
    if (resourceTeams.has(problem.file)) return resourceTeams.get(problem.file)
    const keys = (keyEntries.get(problem.file) as { keys?: unknown } | null | undefined)?.keys
    const entry = /^keys\[(\d+)\]/.exec(problem.path)?.[1]
    const team =
      Array.isArray(keys) && entry !== undefined ? (keys[Number(entry)] as { team?: unknown })?.team : undefined
    return typeof team === "string" ? team : undefined
  }
  return problems.map((problem) => {
    const team = teamOf(problem)
    return team === undefined ? problem : { ...problem, team }
  })
}
