/**
 * Small hooks the screens share: a request's state, a write's state, paging
 * that keeps the focus, a repeating poll, the document's title, the colour
 * scheme.
 */
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "preact/hooks"

export type Loaded<A> =
  | { readonly state: "loading" }
  | { readonly state: "failed"; readonly error: Error }
  | { readonly state: "ready"; readonly value: A }

/** Runs `load` when `key` changes; `reload` runs it again, keeping the current value until the new one comes. */
export const useLoad = <A>(load: () => Promise<A>, key: string): [Loaded<A>, () => Promise<void>] => {
  const [loaded, setLoaded] = useState<Loaded<A>>({ state: "loading" })
  const latest = useRef(0)
  const run = useCallback(async () => {
    const ticket = ++latest.current
    try {
      const value = await load()
      if (ticket === latest.current) setLoaded({ state: "ready", value })
    } catch (error) {
      if (ticket === latest.current) setLoaded({ state: "failed", error: error as Error })
    }
    // `key` names what `load` reads: a new key, a new load.
  }, [key])
  useEffect(() => {
    setLoaded({ state: "loading" })
    void run()
    return () => {
      latest.current++
    }
  }, [run])
  return [loaded, run]
}

/**
 * A write's state: whether it is under way and why it was last refused.
 * `run` forgets the last refusal, is busy until `write` ends and keeps what
 * it threw; `setError` says why a write was not even tried.
 */
export const useWrite = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<Error | undefined>(undefined)
  const run = async (write: () => Promise<void>): Promise<void> => {
    setBusy(true)
    setError(undefined)
    try {
      await write()
    } catch (failure) {
      setError(failure as Error)
    } finally {
      setBusy(false)
    }
  }
  return { busy, error, setError, run }
}

/** Whether the next page of a list is being read, or why it could not be. */
export type More = "idle" | "loading" | Error

/**
 * Paging that keeps the focus: the function returned asks for the next page
 * (`loadMore`), and once its items are shown the focus moves to the first of
 * them (the element `target` finds), so the button that asked, gone with the
 * last page, does not leave it on <body>.
 */
export const useShowMore = <A, I>(
  loaded: Loaded<A>,
  itemsOf: (value: A) => ReadonlyArray<I>,
  target: (item: I) => HTMLElement | null,
  loadMore: () => Promise<void>
): (() => void) => {
  const firstOfPage = useRef<number | undefined>(undefined)
  // A layout effect: the focus moves in the same task that adds the page's items (and removes
  // the focused button), so no moment shows the items with the focus on <body>.
  useLayoutEffect(() => {
    const index = firstOfPage.current
    if (loaded.state !== "ready" || index === undefined) return
    const item = itemsOf(loaded.value)[index]
    if (item === undefined) return
    firstOfPage.current = undefined
    target(item)?.focus()
  }, [loaded])
  return () => {
    if (loaded.state === "ready") firstOfPage.current = itemsOf(loaded.value).length
    void loadMore()
  }
}

/** Names the document after the screen shown: `<title> · Campusgate console`. */
export const useTitle = (title: string): void => {
  useEffect(() => {
    document.title = `${title} · Campusgate console`
  }, [title])
}

/** Calls `tick` every `ms` while `active`. */
export const useInterval = (tick: () => void, ms: number, active: boolean): void => {
  const saved = useRef(tick)
  saved.current = tick
  useEffect(() => {
    if (!active) return
    const timer = setInterval(() => saved.current(), ms)
    return () => clearInterval(timer)
  }, [ms, active])
}

/** The preferred colour scheme, following changes. */
export const useDarkScheme = (): boolean => {
  const query = "(prefers-color-scheme: dark)"
  const [dark, setDark] = useState(() => matchMedia(query).matches)
  useEffect(() => {
    const media = matchMedia(query)
    const update = () => setDark(media.matches)
    media.addEventListener("change", update)
    return () => media.removeEventListener("change", update)
  }, [])
  return dark
}
