/**
 * Screens by path under `/console` (the daemon answers the app for any
 * path there without a file extension, so a reload or a shared link opens
 * the same screen): history navigation without reloads, and the screen a
 * path names.
 */
import { useEffect, useState } from "preact/hooks"

export const BASE = "/console"

export type Route =
  | { readonly screen: "offers" }
  | { readonly screen: "offer"; readonly id: string }
  | { readonly screen: "target-groups" }
  | { readonly screen: "jobs" }
  | { readonly screen: "reviews" }
  | { readonly screen: "review"; readonly domain: string }
  | { readonly screen: "status" }

export const routeOf = (pathname: string): Route => {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname
  const parts = rest.split("/").filter(Boolean)
  switch (parts[0]) {
    case "offers":
      return parts[1] === undefined ? { screen: "offers" } : { screen: "offer", id: decodeURIComponent(parts[1]) }
    case "target-groups":
      return { screen: "target-groups" }
    case "jobs":
      return { screen: "jobs" }
    case "reviews":
      return parts[1] === undefined ? { screen: "reviews" } : { screen: "review", domain: decodeURIComponent(parts[1]) }
    case "status":
      return { screen: "status" }
    default:
      return { screen: "offers" }
  }
}

export const hrefOf = (route: Route): string => {
  switch (route.screen) {
    case "offer":
      return `${BASE}/offers/${encodeURIComponent(route.id)}`
    case "review":
      return `${BASE}/reviews/${encodeURIComponent(route.domain)}`
    default:
      return `${BASE}/${route.screen}`
  }
}

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
