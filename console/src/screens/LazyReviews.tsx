/**
 * The Reviews screens in a chunk of their own (with the country list of
 * the approve form), loaded the first time one is opened, since most
 * sessions never do: the first screen stays as light as before. Once the
 * chunk is in, the focus moves to the screen's heading, as the app does
 * on every navigation.
 */
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks"
import { ErrorNote } from "../components/common.tsx"

type ReviewScreens = typeof import("./reviewScreens.ts")
type ReviewRoute = { readonly screen: "reviews" } | { readonly screen: "review"; readonly domain: string }

let loaded: ReviewScreens | undefined

export const LazyReviews = (props: { readonly route: ReviewRoute }) => {
  const [screens, setScreens] = useState<ReviewScreens | Error | undefined>(loaded)
  const arrived = useRef(false)

  useEffect(() => {
    if (loaded !== undefined) return
    import("./reviewScreens.ts").then(
      (module) => {
        loaded = module
        arrived.current = true
        setScreens(module)
      },
      (error: Error) => setScreens(error)
    )
  }, [])

  useLayoutEffect(() => {
    if (!arrived.current) return
    arrived.current = false
    // The app focused no heading on this navigation (there was none yet): this one, unless the focus is in the screen already.
    if (!document.querySelector("main")?.contains(document.activeElement))
      document.querySelector<HTMLElement>("main h1")?.focus()
  }, [screens])

  if (screens === undefined)
    return (
      <p class="note" role="status">
        Loading…
      </p>
    )
  if (screens instanceof Error) return <ErrorNote error={screens} what="The Reviews screen could not be loaded" />
  return props.route.screen === "review" ? <screens.ReviewPage domain={props.route.domain} /> : <screens.Reviews />
}
