/**
 * URLs the config and the API take: absolute, of one of a few protocols
 * (`http:`/`https:` for callbacks and links, `redis:`/`rediss:` for the
 * shared store). One parse and one protocol rule for every such field.
 */
import * as Schema from "effect/Schema"

export const HTTP_PROTOCOLS: ReadonlyArray<string> = ["http:", "https:"]
export const REDIS_PROTOCOLS: ReadonlyArray<string> = ["redis:", "rediss:"]
/** What a Redis URL must be, as problems say it. */
export const REDIS_URL_EXPECTED = "a redis:// or rediss:// URL"

/** The schemes of a PostgreSQL server's URL. */
export const POSTGRES_PROTOCOLS: ReadonlyArray<string> = ["postgres:", "postgresql:"]
/** What a PostgreSQL URL must be, as problems say it. */
export const POSTGRES_URL_EXPECTED = "a postgres:// or postgresql:// URL"

/** `text` as an absolute URL of one of `protocols`, else null. */
export const urlOf = (text: string, protocols: ReadonlyArray<string>): URL | null => {
  const url = URL.parse(text)
  return url !== null && protocols.includes(url.protocol) ? url : null
}

/** A string that is an absolute URL of one of `protocols`; `expected` says what else is refused. */
export const UrlOf = (protocols: ReadonlyArray<string>, expected: string) =>
  Schema.String.pipe(
    Schema.check(Schema.makeFilter((text: string) => (urlOf(text, protocols) !== null ? true : expected)))
  )
