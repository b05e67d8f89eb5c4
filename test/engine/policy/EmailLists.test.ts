import { describe, expect, it } from "@effect/vitest"
import { asEmailListsData, loadBuiltInEmailLists, loadEmailLists } from "../../../src/engine/policy/index.ts"
import { testEmailListsData } from "./fixtures.ts"

describe("EmailLists", () => {
  const lists = loadEmailLists(testEmailListsData())

  describe("disposable", () => {
    it("matches a listed domain exactly", () => {
      expect(lists.matchDisposable("mailinator.com")).toBe("mailinator.com")
      expect(lists.isDisposable("0.pbot.tk")).toBe(true)
    })

    it("does not extend a plain entry to its subdomains or parents", () => {
      expect(lists.isDisposable("x.mailinator.com")).toBe(false)
      expect(lists.isDisposable("pbot.tk")).toBe(false)
      expect(lists.isDisposable("mailinator.co")).toBe(false)
    })

    it("extends a wildcard entry to every subdomain, and to itself", () => {
      expect(lists.matchDisposable("33mail.com")).toBe("33mail.com")
      expect(lists.matchDisposable("alice.33mail.com")).toBe("33mail.com")
      expect(lists.matchDisposable("a.b.c.33mail.com")).toBe("33mail.com")
      expect(lists.isDisposable("x33mail.com")).toBe(false)
    })

    it("lets a wildcard on a private-section suffix cover its subdomains", () => {
      expect(lists.matchDisposable("someone.ddns.net")).toBe("ddns.net")
    })

    it("knows which domains may have a listed disposable domain below them: every parent of one, and not others", () => {
      for (const domain of ["com", "pbot.tk", "tk", "samples", "net"]) {
        expect(lists.mayHaveListedDisposableBelow(domain), domain).toBe(true)
      }
      for (const domain of ["mailinator.com", "0.pbot.tk", "33mail.com", "x.mailinator.com", "edu", "mit.edu", "id"]) {
        expect(lists.mayHaveListedDisposableBelow(domain), domain).toBe(false)
      }
    })

    it("never lets a wildcard entry that is an ICANN public suffix cover a whole registry", () => {
      expect(lists.isDisposable("university.my.id")).toBe(false)
      expect(lists.counts.disposableWildcard).toBe(2)
    })
  })

  describe("free mail", () => {
    it("matches a provider domain and its subdomains", () => {
      expect(lists.matchFreeMail("gmail.com")).toBe("gmail.com")
      expect(lists.matchFreeMail("inbox.mail.ru")).toBe("mail.ru")
      expect(lists.matchFreeMail("uk.yahoo.co.uk")).toBe("yahoo.co.uk")
    })

    it("does not match look-alike or parent domains", () => {
      expect(lists.isFreeMail("gmail.co")).toBe(false)
      expect(lists.isFreeMail("notgmail.com")).toBe(false)
      expect(lists.isFreeMail("co.uk")).toBe(false)
    })

    it("matches a shared-registry entry only as itself, not the institutions registered under it", () => {
      expect(lists.isFreeMail("spb.ru")).toBe(true)
      expect(lists.isFreeMail("herzen.spb.ru")).toBe(false)
    })

    it("answers the exact common-provider list for typo suggestions", () => {
      expect(lists.isCommonMailProvider("gmail.com")).toBe(true)
      expect(lists.isCommonMailProvider("mail.ru")).toBe(false)
    })
  })

  describe("role accounts", () => {
    it.each([
      ["admin", "admin"],
      ["Admin", "admin"],
      ["admin+billing", "admin"],
      ['"admin"', "admin"],
      ["no-reply", "no-reply"],
      ["noreply", "noreply"],
      ["no_reply", "noreply"],
      ["No.Reply+x", "noreply"],
      ["no--reply", "noreply"],
      ["sales_team", "sales.team"],
      ["salesteam", "sales.team"],
      ["ads.account.noreply", "ads-account-noreply"],
      ["a.dmin", "admin"], // separators are dropped when five or more letters remain
      ["co.op", "co-op"],
      ["it", "it"]
    ])("%s is the role %s", (localPart, role) => {
      expect(lists.matchRoleAccount(localPart)).toBe(role)
    })

    it.each(["alice", "j.smith", "m.d", "i-t", "admins", "+admin", "no-reply-bob", "", "jane.doe+admin"])(
      "%s is a person",
      (localPart) => {
        expect(lists.isRoleAccount(localPart)).toBe(false)
      }
    )
  })

  it("exposes provenance and counts per list", () => {
    expect(lists.sources.disposable).toEqual({ package: "test-fixture", version: "0.0.0", file: "inline" })
    expect(lists.counts).toEqual({
      disposable: 5,
      disposableWildcard: 2,
      freeMail: 5,
      commonMailProviders: 2,
      roleAccounts: 8
    })
  })

  it("loads empty lists", () => {
    const empty = loadEmailLists(
      testEmailListsData({
        disposable: [],
        disposableWildcard: [],
        freeMail: [],
        commonMailProviders: [],
        roleAccounts: []
      })
    )
    expect(empty.isDisposable("mailinator.com")).toBe(false)
    expect(empty.isFreeMail("gmail.com")).toBe(false)
    expect(empty.isRoleAccount("admin")).toBe(false)
  })

  it("rejects data of another format with a message saying what to do", () => {
    expect(() => asEmailListsData({ format: "something-else/9", lists: {} })).toThrow(/npm run build/)
    expect(() => asEmailListsData({ ...testEmailListsData(), lists: { disposable: {} } })).toThrow(/disposable/)
  })
})

describe("built-in email lists (built by `npm install`)", () => {
  const lists = loadBuiltInEmailLists()

  it("flags well-known disposable, free-mail and role entries", () => {
    expect(lists.isDisposable("mailinator.com")).toBe(true)
    expect(lists.isDisposable("anything.33mail.com")).toBe(true)
    expect(lists.isFreeMail("gmail.com")).toBe(true)
    expect(lists.isFreeMail("outlook.com")).toBe(true)
    expect(lists.isCommonMailProvider("gmail.com")).toBe(true)
    expect(lists.isRoleAccount("postmaster")).toBe(true)
    expect(lists.isRoleAccount("no_reply+123")).toBe(true)
  })

  it("leaves universities alone", () => {
    for (const domain of ["mit.edu", "ox.ac.uk", "stanford.edu", "herzen.spb.ru", "uni-heidelberg.de"]) {
      expect(lists.isDisposable(domain)).toBe(false)
      expect(lists.isFreeMail(domain)).toBe(false)
    }
  })

  it("records which package version each list came from", () => {
    expect(lists.sources.disposable.package).toBe("disposable-email-domains")
    expect(lists.sources.freeMail.package).toBe("email-providers")
    expect(lists.sources.roleAccounts.package).toBe("role-based-email-addresses")
    expect(lists.counts.disposable).toBeGreaterThan(100_000)
  })
})
