/**
 * History navigation without reloads under `/console`, and the route of
 * the address bar (the paths and screens themselves: `data/routes.ts`).
 */
import { useEffect, useState } from "preact/hooks"
import { type Route, routeOf } from "./data/routes.ts"

export { BASE, hrefOf, type Route, routeOf } from "./data/routes.ts"

const listeners = new Set<() => void>()

export const navigate = (href: string): void => {
  if (href !== location.pathname) history.pushState(null, "", href)
  for (const listener of listeners) listener()
}

/** The route of the address bar, following links and the back button. */
export const useRoute = (): Route => {
  const [route, setRoute] = useState(() => routeOf(location.pathname))
  useEffect(() => {
    const update = () => setRoute(routeOf(location.pathname))
    listeners.add(update)
    addEventListener("popstate", update)
    return () => {
      listeners.delete(update)
      removeEventListener("popstate", update)
    }
  }, [])
  return route
}

/** A link's click as an in-app navigation, unless the user asked for a new tab or window. */
export const followLink = (event: MouseEvent): void => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return
  const anchor = event.currentTarget as HTMLAnchorElement
  event.preventDefault()
  navigate(anchor.pathname)
}
