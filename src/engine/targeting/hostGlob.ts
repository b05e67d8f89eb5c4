/**
 * Host globs for target-group patterns (`*.ac.uk`, `students.*.edu`,
 * `stu*.x.edu.cn`). Users never write regular expressions: a glob compiles
 * to an anchored expression where `*` inside a label matches any characters
 * but a dot, and a leading `*.` matches one or more whole labels.
 * Specificity is the number of labels without a wildcard, so that the most
 * specific rule wins between allow and deny patterns and domain lists.
 */
export interface HostGlob {
  readonly pattern: string
  readonly specificity: number
  readonly test: (host: string) => boolean
}

const escapeLabel = (label: string): string => label.replace(/[.+?^${}()|[\]\\-]/g, "\\$&").replace(/\*/g, "[^.]*")

export const compileHostGlob = (pattern: string): HostGlob => {
  const labels = pattern.split(".")
  const leadingAny = labels[0] === "*"
  const rest = leadingAny ? labels.slice(1) : labels
  const body = rest.map(escapeLabel).join("\\.")
  const regex = new RegExp(`^${leadingAny ? "(?:[^.]+\\.)+" : ""}${body}$`)
  return {
    pattern,
    specificity: labels.filter((label) => !label.includes("*")).length,
    test: (host) => regex.test(host)
  }
}

/** The number of labels in a host name (`x.edu.cn` → 3). */
export const labelCount = (host: string): number => {
  let n = 1
  for (let i = host.indexOf("."); i >= 0; i = host.indexOf(".", i + 1)) n++
  return n
}
