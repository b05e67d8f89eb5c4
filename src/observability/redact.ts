/**
 * What a log line may not hold, taken out of its text: an API key is
 * always replaced by its prefix (`cgk_***`), and an email address, unless
 * `logging.logEmails` is on, by its domain (`***@ox.ac.uk`), which is
 * enough to see which institution a problem is about. The log applies it
 * to every string of every event line (`Log.ts`), so a message that
 * quotes a config file's example address or a callback URL's user part is
 * covered without each log site remembering to.
 *
 * The address pattern is deliberately loose (anything without spaces or
 * delimiters around an `@`): masking a little too much is better than
 * writing an address. A local part stops at URL delimiters (`/ ? # & =`),
 * so `?to=jane@ox.ac.uk` keeps its `?to=`; the rare address with one of
 * them in its local part keeps what precedes it.
 *
 * A URL's password (`redis://:secret@cache`, `postgres://app:secret@db`)
 * is never written, whatever `logEmails` says: `redactCredentials`, applied
 * to every line and to whatever a command prints about a store.
 */
import { API_KEY_PREFIX } from "../keys/apiKeys.ts"

const API_KEY = new RegExp(`${API_KEY_PREFIX}[A-Za-z0-9_-]+`, "g")
const EMAIL = /[^\s@"'`<>()[\]{},;:\\/?#&=]+@[^\s@"'`<>()[\]{},;:\\/?#]+/g

/** An address as the log shows it with `logEmails` off: `***@` and its domain. */
export const maskEmail = (address: string): string => {
  const at = address.lastIndexOf("@")
  return at < 0 ? "***" : `***@${address.slice(at + 1)}`
}

const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s/@:]*):[^\s/@]*@/gi

/** `text` with the password of every URL in it replaced by `***` (`postgres://app:***@db/campusgate`). */
export const redactCredentials = (text: string): string =>
  text.includes("://") ? text.replace(URL_PASSWORD, "$1:***@") : text

/** `text` with every API key replaced by its prefix. */
export const redactApiKeys = (text: string): string =>
  text.includes(API_KEY_PREFIX) ? text.replace(API_KEY, `${API_KEY_PREFIX}***`) : text

/** `text` with, unless `logEmails`, every address reduced to its domain. */
export const redactAddresses = (text: string, logEmails: boolean): string => {
  const safe = redactCredentials(text)
  return logEmails || !safe.includes("@") ? safe : safe.replace(EMAIL, maskEmail)
}

/** `text` as a log line may hold it: API keys masked and, unless `logEmails`, addresses reduced to their domain. */
export const redact = (text: string, logEmails: boolean): string => redactAddresses(redactApiKeys(text), logEmails)
