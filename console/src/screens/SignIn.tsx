/**
 * Sign-in: an API key is exchanged for a session cookie
 * (`POST /console/session`). The key lives in this form's field only until
 * the answer comes: it is never stored, and the app keeps only the answer
 * (team, scopes, expiry, CSRF token), in memory.
 */
import { useEffect, useRef, useState } from "preact/hooks"
import { signIn } from "../api.ts"
import type { Session } from "../apiTypes.ts"
import { useTitle } from "../hooks.ts"

export const SignIn = (props: { readonly onSignedIn: (session: Session) => void; readonly notice?: string }) => {
  const field = useRef<HTMLInputElement>(null)
  const [error, setError] = useState<string | undefined>(undefined)
  const [busy, setBusy] = useState(false)

  useTitle("Sign in")
  useEffect(() => {
    field.current?.focus()
  }, [])

  const submit = async (event: Event) => {
    event.preventDefault()
    const input = field.current
    if (input === null) return
    const key = input.value.trim()
    if (key === "") {
      setError("Enter an API key.")
      input.focus()
      return
    }
    setBusy(true)
    setError(undefined)
    try {
      const session = await signIn(key)
      input.value = ""
      props.onSignedIn(session)
    } catch (failure) {
      setError((failure as Error).message)
      setBusy(false)
      input.select()
    }
  }

  return (
    <main id="main" class="sign-in">
      <h1>Campusgate console</h1>
      <p class="muted">Sign in with one of your team's API keys. The key is exchanged for a session and not kept.</p>
      {props.notice === undefined ? null : (
        <p class="note" role="status">
          {props.notice}
        </p>
      )}
      <form onSubmit={submit} class="stack" noValidate>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          ref={field}
          type="password"
          name="key"
          autocomplete="off"
          spellcheck={false}
          aria-describedby={error === undefined ? undefined : "sign-in-error"}
          aria-invalid={error === undefined ? undefined : true}
          required
        />
        {error === undefined ? null : (
          <p id="sign-in-error" class="note note-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" class="primary" disabled={busy}>
          {busy ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  )
}
