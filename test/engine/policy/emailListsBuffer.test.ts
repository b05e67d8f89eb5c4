import { describe, expect, it } from "vitest"
import { readBuiltInJson } from "../../../src/engine/data/builtInData.ts"
import { EmailLists, loadBuiltInEmailLists, packDisposable } from "../../../src/engine/policy/EmailLists.ts"
import { asEmailListsData } from "../../../src/engine/policy/EmailListsData.ts"
import { decodeEmailLists, encodeEmailLists } from "../../../src/engine/policy/emailListsBuffer.ts"
import { testEmailListsData } from "./fixtures.ts"

const fromBuffer = (bytes: Uint8Array): EmailLists => EmailLists.fromBuffer(bytes)

const hosts = ["mailinator.com", "x.33mail.com", "ddns.net", "a.b.ddns.net", "my.id", "mail.yahoo.com", "spb.ru"]
const answers = (lists: EmailLists, host: string) => ({
  disposable: lists.matchDisposable(host),
  listed: lists.isListedDisposable(host),
  freeMail: lists.matchFreeMail(host),
  common: lists.isCommonMailProvider(host)
})

describe("the email lists' binary form", () => {
  it("answers as the lists it was compiled from", () => {
    const data = testEmailListsData()
    const lists = fromBuffer(encodeEmailLists(data, packDisposable(data)))
    const fresh = new EmailLists(data)
    expect(lists.counts).toEqual(fresh.counts)
    expect(lists.sources).toEqual(fresh.sources)
    for (const host of [...hosts, "throwaway.samples", "gmail.com", "example.org"]) {
      expect(answers(lists, host), host).toEqual(answers(fresh, host))
    }
    expect(lists.matchRoleAccount("No_Reply+x")).toBe(fresh.matchRoleAccount("No_Reply+x"))
    expect(lists.matchRoleAccount("No_Reply+x")).not.toBeNull()
  })

  it("built in, is read into shared memory, which a job thread reads without a copy of its own", () => {
    const lists = loadBuiltInEmailLists()
    expect(lists.bytes?.buffer).toBeInstanceOf(SharedArrayBuffer)
    const again = fromBuffer(lists.bytes!)
    for (const host of hosts) expect(answers(again, host), host).toEqual(answers(lists, host))
  })

  it("reads from an offset that is not 4-byte aligned", () => {
    const data = testEmailListsData()
    const bytes = encodeEmailLists(data, packDisposable(data))
    const shifted = new Uint8Array(bytes.length + 1)
    shifted.set(bytes, 1)
    expect(fromBuffer(shifted.subarray(1)).isDisposable("mailinator.com")).toBe(true)
  })

  it("refuses a file that is not one, truncated, or a non-ASCII domain", () => {
    const data = testEmailListsData()
    const bytes = encodeEmailLists(data, packDisposable(data))
    expect(() => decodeEmailLists(new Uint8Array(16))).toThrow(/not a compiled/)
    expect(() => decodeEmailLists(bytes.subarray(0, bytes.length - 1))).toThrow(/truncated/)
    const accented = testEmailListsData({ disposable: ["exämple.com"] })
    expect(() => encodeEmailLists(accented, packDisposable(accented))).toThrow(/not ASCII/)
  })

  it("is, as built, the lists of email-lists.json", () => {
    const packed = loadBuiltInEmailLists()
    const data = asEmailListsData(readBuiltInJson("email-lists.json.gz"))
    const fresh = new EmailLists(data)
    expect(packed.counts).toEqual(fresh.counts)
    expect(packed.sources).toEqual(fresh.sources)
    for (const domain of data.lists.disposable.entries.split("\n")) expect(packed.isListedDisposable(domain)).toBe(true)
    expect([...packed.freeMailDomains()]).toEqual([...fresh.freeMailDomains()])
    for (const host of hosts) expect(answers(packed, host), host).toEqual(answers(fresh, host))
  })
})
