/**
 * The cursor of a results page: where the next page starts in
 * `results.ndjson`, as a byte offset and a row index, base64url-encoded so
 * clients treat it as opaque. Decoding checks its form and bounds; the
 * reader then checks the offset is at the start of a row, so a tampered
 * cursor is an `InvalidCursor` error, never a crash or a page starting
 * mid-row.
 */

export interface ResultsPosition {
  /** Byte offset of the row in the file. */
  readonly offset: number
  /** 0-based index of the row. */
  readonly row: number
}

export const encodeCursor = (position: ResultsPosition): string =>
  Buffer.from(`r1:${position.offset}:${position.row}`).toString("base64url")

const form = /^r1:(0|[1-9]\d{0,14}):(0|[1-9]\d{0,14})$/

/** The position in `cursor`, or undefined when it is not one this module made. */
export const decodeCursor = (cursor: string): ResultsPosition | undefined => {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return undefined
  const match = form.exec(Buffer.from(cursor, "base64url").toString("latin1"))
  if (match === null) return undefined
  const offset = Number(match[1])
  const row = Number(match[2])
  // Every row takes at least one byte, and only the first row starts at offset 0.
  if (row > offset || (offset === 0) !== (row === 0)) return undefined
  return { offset, row }
}
