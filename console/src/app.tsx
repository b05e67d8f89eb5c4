/**
 * The console: asks the daemon for a live session on load (so a reload
 * keeps you signed in), shows the sign-in without one, and otherwise the
 * screen the address names, under a header with the navigation, the team
 * and sign-out. The session answer is all it keeps, in memory; a 401 on
 * any call, or the session's expiry, brings the sign-in back. On each
 * navigation the focus moves to the new screen's heading, so keyboard and
 * screen-reader users start there.
 */
import { useEffect, useMemo, useState } from "preact/hooks"
import { currentSession, makeApi, signOut } from "./api.ts"
import type { Session } from "./apiTypes.ts"
import { Link } from "./components/common.tsx"
import { REVIEW_SCOPE, SignedContext } from "./context.ts"
import { hrefOf, type Route, useRoute } from "./router.ts"
import { Jobs } from "./screens/Jobs.tsx"
import { LazyReviews } from "./screens/LazyReviews.tsx"
import { OfferPage } from "./screens/OfferPage.tsx"
import { Offers } from "./screens/Offers.tsx"
import { SignIn } from "./screens/SignIn.tsx"
import { Status } from "./screens/Status.tsx"
import { TargetGroups } from "./screens/TargetGroups.tsx"

type Phase =
  | { readonly phase: "checking" }
  | { readonly phase: "signed-out"; readonly notice?: string }
  | { readonly phase: "signed-in"; readonly session: Session }

/** The navigation: each screen's name, and the scope it needs to be listed (the Reviews screen's, `institutions:review`). */
const NAV: ReadonlyArray<readonly [Route["screen"], string, string?]> = [
  ["offers", "Offers"],
  ["target-groups", "Target groups"],
  ["jobs", "Jobs"],
  ["reviews", "Reviews", REVIEW_SCOPE],
  ["status", "Status"]
]

/** The section of the navigation a route belongs to. */
const sectionOf = (route: Route): Route["screen"] =>
  route.screen === "offer" ? "offers" : route.screen === "review" ? "reviews" : route.screen

const Screen = (props: { readonly route: Route }) => {
  switch (props.route.screen) {
    case "offers":
      return <Offers />
    case "offer":
      return <OfferPage id={props.route.id} />
    case "target-groups":
      return <TargetGroups />
    case "jobs":
      return <Jobs />
    case "reviews":
    case "review":
      return <LazyReviews route={props.route} />
    case "status":
      return <Status />
  }
}

const Console = (props: { readonly session: Session; readonly onSignedOut: (notice?: string) => void }) => {
  const route = useRoute()
  const api = useMemo(
    () => makeApi(props.session, () => props.onSignedOut("Your session has ended. Sign in again.")),
    [props.session, props.onSignedOut]
  )
  const [signingOut, setSigningOut] = useState(false)
  const section = sectionOf(route)
  const routeKey = hrefOf(route)

  useEffect(() => {
    const heading = document.querySelector<HTMLElement>("main h1")
    heading?.focus()
  }, [routeKey])

  useEffect(() => {
    const left = Date.parse(props.session.expiresAt) - Date.now()
    const timer = setTimeout(
      () => props.onSignedOut("Your session has expired. Sign in again."),
      Math.min(Math.max(0, left), 2 ** 31 - 1)
    )
    return () => clearTimeout(timer)
  }, [props.session, props.onSignedOut])

  const leave = async () => {
    setSigningOut(true)
    try {
      await signOut(props.session)
    } catch {
      // Signed out all the same: the cookie expires by itself, and nothing of the session stays in this page.
    }
    props.onSignedOut("Signed out.")
  }

  return (
    <SignedContext.Provider value={{ session: props.session, api }}>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">Campusgate</span>
        <nav aria-label="Main">
          <ul>
            {NAV.filter(([, , scope]) => scope === undefined || props.session.scopes.includes(scope)).map(
              ([screen, label]) => (
                <li key={screen}>
                  <Link href={hrefOf({ screen } as Route)} current={section === screen}>
                    {label}
                  </Link>
                </li>
              )
            )}
          </ul>
        </nav>
        <div class="who">
          <span>
            Team <strong data-team={props.session.team}>{props.session.team}</strong>
          </span>
          <button type="button" onClick={leave} disabled={signingOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" key={routeKey}>
        <Screen route={route} />
      </main>
    </SignedContext.Provider>
  )
}

export const App = () => {
  const [phase, setPhase] = useState<Phase>({ phase: "checking" })

  useEffect(() => {
    currentSession().then(
      (session) => setPhase(session === undefined ? { phase: "signed-out" } : { phase: "signed-in", session }),
      (error: Error) => setPhase({ phase: "signed-out", notice: error.message })
    )
  }, [])

  const signedOut = useMemo(
    () => (notice?: string) =>
      setPhase(notice === undefined ? { phase: "signed-out" } : { phase: "signed-out", notice }),
    []
  )

  switch (phase.phase) {
    case "checking":
      return (
        <main id="main">
          <p class="note" role="status">
            Loading…
          </p>
        </main>
      )
    case "signed-out":
      return (
        <SignIn
          onSignedIn={(session) => setPhase({ phase: "signed-in", session })}
          {...(phase.notice === undefined ? {} : { notice: phase.notice })}
        />
      )
    case "signed-in":
      return <Console session={phase.session} onSignedOut={signedOut} />
  }
}
