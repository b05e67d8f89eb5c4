/**
 * The Jobs screen's list as state (`data/jobPages.ts` says how pages are
 * read): loaded on mount, `refresh` reads it again from the top as far as
 * it is shown, `loadMore` appends the next page. One read at a time, in
 * the order asked, so a refresh never drops a page loaded meanwhile; a
 * poll while a read is under way is skipped rather than queued.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import type { Api } from "../api.ts"
import type { JobList } from "../apiTypes.ts"
import { type JobPages, jobsPageUrl, nextPageUrl, withPage } from "../data/jobPages.ts"
import type { Loaded, More } from "../hooks.ts"

export interface JobPagesState {
  readonly loaded: Loaded<JobPages>
  /** Whether the next page is being read, or why it could not be. */
  readonly more: More
  /** Reads the list again as far as it is shown (a job started, cancelled, or still running). */
  readonly refresh: () => Promise<void>
  /** Appends the next page. */
  readonly loadMore: () => Promise<void>
  /** Whether a read is under way (a poll then waits for the next tick). */
  readonly busy: () => boolean
}

export const useJobPages = (api: Api, limit: number): JobPagesState => {
  const [loaded, setLoaded] = useState<Loaded<JobPages>>({ state: "loading" })
  const [more, setMore] = useState<JobPagesState["more"]>("idle")
  const shown = useRef<JobPages | undefined>(undefined)
  const queue = useRef<Promise<void>>(Promise.resolve())
  const pending = useRef(0)
  const mounted = useRef(true)

  const show = (pages: JobPages) => {
    shown.current = pages
    if (mounted.current) setLoaded({ state: "ready", value: pages })
  }

  /** Runs `read` after the reads asked before it. */
  const inTurn = (read: () => Promise<void>): Promise<void> => {
    pending.current++
    const turn = queue.current.then(read).finally(() => {
      pending.current--
    })
    queue.current = turn.catch(() => undefined)
    return turn
  }

  const refresh = () =>
    inTurn(async () => {
      const wanted = shown.current?.jobs.length ?? 0
      let read: JobPages | undefined
      try {
        for (let url = nextPageUrl(read, limit, wanted); url !== undefined; url = nextPageUrl(read, limit, wanted))
          read = withPage(read, await api.request<JobList>(url))
      } catch (error) {
        if (mounted.current) setLoaded({ state: "failed", error: error as Error })
        return
      }
      if (read !== undefined) show(read)
    })

  const loadMore = () =>
    inTurn(async () => {
      const before = shown.current
      if (before === undefined || before.nextCursor === null) return
      setMore("loading")
      try {
        show(withPage(before, await api.request<JobList>(jobsPageUrl(limit, before.nextCursor))))
        if (mounted.current) setMore("idle")
      } catch (error) {
        if (mounted.current) setMore(error as Error)
      }
    })

  useEffect(() => {
    mounted.current = true
    void refresh()
    return () => {
      mounted.current = false
    }
  }, [api, limit])

  return { loaded, more, refresh, loadMore, busy: () => pending.current > 0 }
}
