/** Small hooks the screens share: a request's state, a repeating poll, the clock. */
import { useCallback, useEffect, useRef, useState } from "preact/hooks"

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
