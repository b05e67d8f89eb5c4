/**
 * Rows as a plain-text table for the terminal: each column as wide as its
 * widest cell, two spaces between columns, no trailing blanks. The first
 * row is the header.
 */
export const table = (rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i]!))
        .join("  ")
        .trimEnd()
    )
    .join("\n")
}
