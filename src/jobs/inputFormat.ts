/**
 * What a gzip file holds when the request does not say (`format`): NDJSON
 * or CSV, told from its first line that is not blank. The request names a
 * target in its query (a JSON document names its own, so it is not one of
 * these); NDJSON's lines are JSON strings or objects, and a CSV's header
 * row is neither, except a header of the one column `"email"` quoted,
 * which is CSV (as an NDJSON item it would be no address).
 */

/** The first line is looked for in this many bytes at most; a file whose first line is longer is read as CSV. */
export const DETECT_BYTES = 64 * 1024

const decoder = new TextDecoder("utf-8")

/** The format a first line says; NDJSON only when it is a JSON object or a JSON string other than `email`. */
export const formatOfFirstLine = (line: string): "ndjson" | "csv" => {
  const text = line.trim()
  if (text.startsWith("{")) return "ndjson"
  if (!text.startsWith('"')) return "csv"
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "string" && value.trim().toLowerCase() !== "email" ? "ndjson" : "csv"
  } catch {
    return "csv"
  }
}

/**
 * The format of a body that starts with `head` (a BOM dropped), or
 * undefined while its first line that is not blank has not ended and more
 * may come (`complete` false, `head` under `DETECT_BYTES`).
 */
export const detectFormat = (head: Uint8Array, complete: boolean): "ndjson" | "csv" | undefined => {
  const text = decoder.decode(head)
  let start = 0
  for (;;) {
    const end = text.indexOf("\n", start)
    const line = end === -1 ? text.slice(start) : text.slice(start, end)
    if (end === -1) {
      if (complete || head.length >= DETECT_BYTES) return line.trim() === "" ? "csv" : formatOfFirstLine(line)
      return undefined
    }
    if (line.trim() !== "") return formatOfFirstLine(line)
    start = end + 1
  }
}
