/**
 * A configuration problem as one line of text, the way the CLI, the
 * daemon's log and the console write it:
 * `target-groups/uk.yaml:7:5 criteria.institutions.countries[1]: "UK" is not ...`.
 * Imports nothing at run time, so the console's bundle writes problems
 * with the same rule.
 */

export interface ProblemPlace {
  readonly file?: string | undefined
  readonly line?: number | undefined
  readonly column?: number | undefined
  readonly path: string
  readonly message: string
}

/** `file:line:column`, `file`, or empty when the problem is in no file. */
export const problemWhere = (problem: ProblemPlace): string =>
  problem.file === undefined
    ? ""
    : `${problem.file}${problem.line === undefined ? "" : `:${problem.line}:${problem.column ?? 1}`}`

export const formatProblem = (problem: ProblemPlace): string => {
  const where = problemWhere(problem)
  return `${where === "" ? "" : `${where} `}${problem.path === "" ? "(file)" : problem.path}: ${problem.message}`
}
