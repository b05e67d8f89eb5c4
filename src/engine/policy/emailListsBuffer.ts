/**
 * The email policy lists' binary form, `dist/data/email-lists.bin`
 * (written by `scripts/build-data.ts` beside `email-lists.json.gz`): the
 * ~120k disposable domains already packed (`PackedDomainSet.ts`: their
 * text, where each starts, the hash table), so a start reads them as they
 * are instead of splitting, deduplicating and hashing every entry again
 * (~100 ms of the daemon's start on a busy machine); the other lists, small,
 * stay in the JSON header as the JSON file has them.
 *
 * Layout: magic, the header's length, the header (JSON: the lists' data with
 * the disposable entries left out, and the packed parts' lengths), padded to
 * 4 bytes; the starts and the table (Int32, little-endian, as on every
 * platform Node supports); the entries' text (ASCII, one byte each).
 */
import { asEmailListsData, type EmailListsData } from "./EmailListsData.ts"
import { PackedDomainSet } from "./PackedDomainSet.ts"

const magic = 0x4347454c // "CGEL"
export const emailListsBufferFormat = "campusgate-email-lists-bin/1"

interface Header {
  readonly format: typeof emailListsBufferFormat
  /** The lists, the disposable one with no entries (they are in the packed parts). */
  readonly data: EmailListsData
  readonly counts: { readonly starts: number; readonly table: number; readonly text: number }
}

const align4 = (n: number): number => (n + 3) & ~3

/** The lists with `disposable` (as `packDisposable` makes it from them) packed ready. */
export const encodeEmailLists = (data: EmailListsData, disposable: PackedDomainSet): Uint8Array => {
  const { text, starts, table } = disposable.parts()
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) > 0x7f) throw new Error(`email lists: a disposable domain is not ASCII near ${i}`)
  }
  const lists = { ...data.lists, disposable: { ...data.lists.disposable, entries: "" } }
  const header: Header = {
    format: emailListsBufferFormat,
    data: { ...data, lists },
    counts: { starts: starts.length, table: table.length, text: text.length }
  }
  const headerBytes = new TextEncoder().encode(JSON.stringify(header))
  const start = align4(8 + headerBytes.length)
  const out = new Uint8Array(start + starts.byteLength + table.byteLength + text.length)
  const view = new DataView(out.buffer)
  view.setUint32(0, magic, true)
  view.setUint32(4, headerBytes.length, true)
  out.set(headerBytes, 8)
  let at = start
  for (const section of [starts, table]) {
    out.set(new Uint8Array(section.buffer, section.byteOffset, section.byteLength), at)
    at += section.byteLength
  }
  Buffer.from(out.buffer, at, text.length).write(text, "latin1")
  return out
}

/**
 * The lists and the packed disposable domains of a compiled buffer (copied
 * once if it does not start on a 4-byte boundary); throws when it is not one,
 * of another version, or truncated. Every check is made here; the domains'
 * text is read when `disposable` is first called (~1.7 MB: with the lists
 * built from it, 40-110 ms of a daemon's start on the shared 2-core machine,
 * which the first `/healthz` does not need: `EmailLists.ts`).
 */
export const decodeEmailLists = (
  given: Uint8Array
): { readonly data: EmailListsData; readonly disposable: () => PackedDomainSet } => {
  const bytes = given.byteOffset % 4 === 0 ? given : Uint8Array.from(given)
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.byteLength < 8 || view.getUint32(0, true) !== magic) {
    throw new Error("email lists: not a compiled email lists file (rebuild with `npm run build`)")
  }
  const headerLength = view.getUint32(4, true)
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  const header = JSON.parse(buffer.toString("utf8", 8, 8 + headerLength)) as Header
  if (header.format !== emailListsBufferFormat) {
    throw new Error(`email lists: compiled file has format "${header.format}", expected "${emailListsBufferFormat}"`)
  }
  const { counts } = header
  const start = align4(8 + headerLength)
  if (start + (counts.starts + counts.table) * 4 + counts.text !== bytes.byteLength) {
    throw new Error("email lists: compiled file is truncated (rebuild with `npm run build`)")
  }
  const starts = new Int32Array(bytes.buffer, bytes.byteOffset + start, counts.starts)
  const table = new Int32Array(bytes.buffer, starts.byteOffset + starts.byteLength, counts.table)
  PackedDomainSet.checkParts(counts.text, starts, table)
  const textAt = start + (counts.starts + counts.table) * 4
  return {
    data: asEmailListsData(header.data),
    disposable: () =>
      new PackedDomainSet({ text: buffer.toString("latin1", textAt, textAt + counts.text), starts, table })
  }
}
