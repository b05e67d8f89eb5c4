/** Small pieces every screen uses: links that navigate in place, status badges, loading and error notes. */
import type { ComponentChildren } from "preact"
import type { Loaded } from "../hooks.ts"
import { followLink } from "../router.ts"

export const Link = (props: {
  readonly href: string
  readonly children: ComponentChildren
  readonly current?: boolean
}) => (
  <a href={props.href} onClick={followLink} aria-current={props.current ? "page" : undefined}>
    {props.children}
  </a>
)

/** A status as a word with a colour; the word carries the meaning, the colour only repeats it. */
export const Badge = (props: { readonly status: string }) => (
  <span class={`badge badge-${props.status}`}>{props.status}</span>
)

export const ErrorNote = (props: { readonly error: Error; readonly what?: string }) => (
  <p class="note note-error" role="alert">
    {props.what === undefined ? "" : `${props.what}: `}
    {props.error.message}
  </p>
)

/** Renders a load's value, or says it is loading, or why it failed. */
export const Show = <A,>(props: {
  readonly loaded: Loaded<A>
  readonly what: string
  readonly children: (value: A) => ComponentChildren
}) => {
  switch (props.loaded.state) {
    case "loading":
      return (
        <p class="note" role="status">
          Loading {props.what}…
        </p>
      )
    case "failed":
      return <ErrorNote error={props.loaded.error} what={`Could not load ${props.what}`} />
    case "ready":
      return <>{props.children(props.loaded.value)}</>
  }
}
