/**
 * The console's one way to the daemon: same-origin requests that carry the
 * session cookie (never a key), `X-CSRF-Token` on every write (POST, PUT,
 * PATCH, DELETE; the daemon refuses a cookie-authenticated write without
 * it), and RFC 9457 problems turned into `ApiError`s with their plain
 * words. A 401 on any call means the session has ended (expired, signed
 * out elsewhere, key revoked): the app is told, and shows the sign-in.
 */
import { PAGE_LIMIT_MAX } from "../../src/api/pageLimits.ts"
import type { Problem, Session } from "./apiTypes.ts"

export class ApiError extends Error {
  readonly status: number
  readonly problem: Problem | undefined
  constructor(status: number, problem: Problem | undefined, fallback: string) {
    super(problem?.detail ?? problem?.title ?? fallback)
    this.status = status
    this.problem = problem
  }
}

const UNSAFE = new Set(["POST", "PUT", "PATCH", "DELETE"])

export interface RequestOptions {
  readonly method?: string
  /** Sent as JSON. */
  readonly json?: unknown
  /** Sent as it is (a picked file), with `contentType`. */
  readonly body?: Blob
  readonly contentType?: string
}

export interface Api {
  /** A JSON answer (undefined for 204). */
  request<A>(path: string, options?: RequestOptions): Promise<A>
}

const readProblem = async (response: Response): Promise<Problem | undefined> => {
  const type = response.headers.get("content-type") ?? ""
  if (!type.includes("json")) return undefined
  try {
    return (await response.json()) as Problem
  } catch {
    return undefined
  }
}

/** Sends one request; a failure is an `ApiError`, and a 401 also calls `onUnauthorized`. */
export const send = async (
  path: string,
  options: RequestOptions & { readonly csrfToken?: string | undefined },
  onUnauthorized: () => void = () => {}
): Promise<Response> => {
  const method = options.method ?? "GET"
  const headers: Record<string, string> = { accept: "application/json" }
  if (UNSAFE.has(method) && options.csrfToken !== undefined) headers["x-csrf-token"] = options.csrfToken
  let body: BodyInit | undefined
  if (options.json !== undefined) {
    headers["content-type"] = "application/json"
    body = JSON.stringify(options.json)
  } else if (options.body !== undefined) {
    headers["content-type"] = options.contentType ?? "application/octet-stream"
    body = options.body
  }
  let response: Response
  try {
    response = await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      ...(body === undefined ? {} : { body })
    })
  } catch {
    throw new ApiError(0, undefined, "The daemon could not be reached. Is it running?")
  }
  if (response.ok) return response
  const problem = await readProblem(response)
  if (response.status === 401) onUnauthorized()
  throw new ApiError(response.status, problem, `${response.status} ${response.statusText}`)
}

const json = async <A>(response: Response): Promise<A> =>
  (response.status === 204 ? undefined : await response.json()) as A

/** The client of a signed-in session. */
export const makeApi = (session: Session, onUnauthorized: () => void): Api => ({
  request: async (path, options = {}) =>
    json(await send(path, { ...options, csrfToken: session.csrfToken }, onUnauthorized))
})

export const SESSION_PATH = "/console/session"

/** The live session, or undefined when there is none (401). */
export const currentSession = async (): Promise<Session | undefined> => {
  try {
    return await json<Session>(await send(SESSION_PATH, {}))
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return undefined
    throw error
  }
}

/** Exchanges a key for a session; the key goes no further than this request. */
export const signIn = async (key: string): Promise<Session> =>
  json<Session>(await send(SESSION_PATH, { method: "POST", json: { key } }))

export const signOut = async (session: Session): Promise<void> => {
  await send(SESSION_PATH, { method: "DELETE", csrfToken: session.csrfToken })
}

/** Every page of a list endpoint (`{ data, nextCursor }`), at most `maxPages`. */
export const listAll = async <A>(api: Api, path: string, maxPages = 20): Promise<ReadonlyArray<A>> => {
  const items: Array<A> = []
  let cursor: string | null = null
  for (let page = 0; page < maxPages; page++) {
    const separator = path.includes("?") ? "&" : "?"
    const url: string = `${path}${separator}limit=${PAGE_LIMIT_MAX}${cursor === null ? "" : `&cursor=${encodeURIComponent(cursor)}`}`
    const answer: { data: ReadonlyArray<A>; nextCursor: string | null } = await api.request(url)
    items.push(...answer.data)
    cursor = answer.nextCursor
    if (cursor === null) break
  }
  return items
}
