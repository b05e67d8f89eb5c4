/** Small compiled email lists for tests, in the same shape `npm run build` writes. */
import {
  type EmailListData,
  type EmailListsData,
  emailListsDataFormat
} from "../../../src/engine/policy/EmailListsData.ts"

const list = (entries: ReadonlyArray<string>): EmailListData => ({
  source: { package: "test-fixture", version: "0.0.0", file: "inline" },
  report: { read: entries.length, kept: entries.length, duplicate: 0, invalid: 0, publicSuffix: 0 },
  entries: entries.join("\n")
})

export const testEmailListsData = (
  overrides: Partial<Record<keyof EmailListsData["lists"], ReadonlyArray<string>>> = {}
): EmailListsData => ({
  format: emailListsDataFormat,
  lists: {
    disposable: list(overrides.disposable ?? ["mailinator.com", "0.pbot.tk", "throwaway.samples"]),
    disposableWildcard: list(overrides.disposableWildcard ?? ["33mail.com", "ddns.net", "my.id"]),
    freeMail: list(overrides.freeMail ?? ["gmail.com", "yahoo.co.uk", "mail.ru", "spb.ru", "yahoo.com"]),
    commonMailProviders: list(overrides.commonMailProviders ?? ["gmail.com", "yahoo.com"]),
    roleAccounts: list(
      overrides.roleAccounts ?? [
        "admin",
        "no-reply",
        "noreply",
        "sales.team",
        "ads-account-noreply",
        "co-op",
        "md",
        "it"
      ]
    )
  }
})
