/**
 * The verification store's records in memory, as both adapters keep them:
 * by id and by address hash, with the changes being written kept apart
 * (staged) until their write succeeds. Readers see committed records only,
 * so nothing is visible before it is durable; a new change is checked
 * against the latest version, staged or committed, so concurrent changes
 * to one record are ordered.
 */
import type { VerificationRecord } from "../domain/Verification.ts"

/** A staged change: a record's new version, or its removal (`record` undefined). */
export interface StagedChange {
  readonly id: string
  readonly record: VerificationRecord | undefined
}

export class RecordIndex {
  readonly #records = new Map<string, VerificationRecord>()
  readonly #byAddress = new Map<string, Set<string>>()
  readonly #staged = new Map<string, Array<StagedChange>>()

  /** Applies a change at once (journal replay, commits). */
  apply(id: string, record: VerificationRecord | undefined): void {
    const previous = this.#records.get(id)
    if (previous !== undefined && previous.addressHash !== record?.addressHash) {
      const ids = this.#byAddress.get(previous.addressHash)
      ids?.delete(id)
      if (ids?.size === 0) this.#byAddress.delete(previous.addressHash)
    }
    if (record === undefined) {
      this.#records.delete(id)
      return
    }
    this.#records.set(id, record)
    let ids = this.#byAddress.get(record.addressHash)
    if (ids === undefined) {
      ids = new Set()
      this.#byAddress.set(record.addressHash, ids)
    }
    ids.add(id)
  }

  stage(id: string, record: VerificationRecord | undefined): StagedChange {
    const change: StagedChange = { id, record }
    const changes = this.#staged.get(id)
    if (changes === undefined) this.#staged.set(id, [change])
    else changes.push(change)
    return change
  }

  #unstage(change: StagedChange): void {
    const changes = this.#staged.get(change.id)
    if (changes === undefined) return
    const at = changes.indexOf(change)
    if (at >= 0) changes.splice(at, 1)
    if (changes.length === 0) this.#staged.delete(change.id)
  }

  /** The change was written: readers see it. */
  commit(change: StagedChange): void {
    this.#unstage(change)
    this.apply(change.id, change.record)
  }

  /** The change failed to be written: it never happened. */
  drop(change: StagedChange): void {
    this.#unstage(change)
  }

  /** The newest version, staged or committed (undefined when removed or unknown). */
  latest(id: string): VerificationRecord | undefined {
    const changes = this.#staged.get(id)
    return changes === undefined ? this.#records.get(id) : changes[changes.length - 1]!.record
  }

  get(id: string): VerificationRecord | undefined {
    return this.#records.get(id)
  }

  byAddress(addressHash: string): Array<VerificationRecord> {
    const ids = this.#byAddress.get(addressHash)
    if (ids === undefined) return []
    const records: Array<VerificationRecord> = []
    for (const id of ids) records.push(this.#records.get(id)!)
    return records
  }

  /** The newest version, staged or committed, of every record of the address (limits are decided over them). */
  latestByAddress(addressHash: string): Array<VerificationRecord> {
    const ids = new Set(this.#byAddress.get(addressHash))
    for (const [id, changes] of this.#staged)
      if (changes[changes.length - 1]!.record?.addressHash === addressHash) ids.add(id)
    const records: Array<VerificationRecord> = []
    for (const id of ids) {
      const record = this.latest(id)
      if (record?.addressHash === addressHash) records.push(record)
    }
    return records
  }

  all(): Array<VerificationRecord> {
    return [...this.#records.values()]
  }

  get size(): number {
    return this.#records.size
  }
}
