/**
 * Screens by path under `/console` (the daemon answers the app for any
 * path there whose last segment has no dot, so a reload or a shared link
 * opens the same screen; a domain's review, `/console/reviews/x.de/`, ends
 * in a slash for that reason): the screen a path names and the path of a
 * screen, as pure functions (`router.ts` follows the address bar).
 */
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
      // The trailing slash keeps the domain's dots out of the last segment, which the daemon would read as a file's extension.
      return `${BASE}/reviews/${encodeURIComponent(route.domain)}/`
    default:
      return `${BASE}/${route.screen}`
  }
}
