/**
 * Small pieces every screen uses: links that navigate in place, status
 * badges, loading and error notes, tables, facts, choices (segmented
 * buttons, a select's options) and the way to a list's next page.
 */
import type { ComponentChildren } from "preact"
import type { Loaded, More } from "../hooks.ts"
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

/** Why something failed, after what failed; a string is a reason of the console's own, said as it is. */
export const ErrorNote = (props: { readonly error: Error | string; readonly what?: string }) => (
  <p class="note note-error" role="alert">
    {props.what === undefined ? "" : `${props.what}: `}
    {typeof props.error === "string" ? props.error : props.error.message}
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

/** A table in its scrolling box: a caption (for screen readers only unless `captionShown`), the columns' names, the rows. */
export const Table = (props: {
  readonly class?: string
  readonly caption: string
  readonly captionShown?: boolean
  readonly columns: ReadonlyArray<string>
  readonly children: ComponentChildren
}) => (
  <div class="table-scroll">
    <table class={props.class}>
      <caption class={props.captionShown ? undefined : "visually-hidden"}>{props.caption}</caption>
      <thead>
        <tr>
          {props.columns.map((column) => (
            <th key={column} scope="col">
              {column}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{props.children}</tbody>
    </table>
  </div>
)

/** One term of a `<dl>` and what it says; `fact` (the daemon's) or `figure` (a count) names the value for scripts. */
export const Fact = (props: {
  readonly term: string
  readonly children: ComponentChildren
  readonly fact?: string
  readonly figure?: string
}) => (
  <div>
    <dt>{props.term}</dt>
    <dd data-fact={props.fact} data-figure={props.figure}>
      {props.children}
    </dd>
  </div>
)

/** Choices as a row of radio buttons, the chosen one marked. */
export const Segmented = <A extends string | number>(props: {
  readonly legend: string
  readonly name: string
  readonly choices: ReadonlyArray<readonly [A, string]>
  readonly chosen: A
  readonly onChoose: (value: A) => void
}) => (
  <fieldset class="segmented">
    <legend class="visually-hidden">{props.legend}</legend>
    {props.choices.map(([value, label]) => (
      <label key={value} class={value === props.chosen ? "selected" : undefined}>
        <input
          type="radio"
          name={props.name}
          value={value}
          checked={value === props.chosen}
          onChange={() => props.onChoose(value)}
        />
        {label}
      </label>
    ))}
  </fieldset>
)

/** A select's options, each a value and its name. */
export const Options = (props: { readonly choices: ReadonlyArray<readonly [string, string]> }) => (
  <>
    {props.choices.map(([value, label]) => (
      <option key={value} value={value}>
        {label}
      </option>
    ))}
  </>
)

/**
 * Below a list read a page at a time: what is shown (`data-shown`, the
 * count of `items`), the button to the page after `next` (the list's
 * cursor, null at its end) and why that page could not be read; `things`
 * names what the list holds.
 */
export const MorePages = (props: {
  readonly items: ReadonlyArray<unknown>
  readonly next: string | null
  readonly more: More
  readonly onMore: () => void
  readonly things: string
  readonly children: ComponentChildren
}) => (
  <div class="actions">
    <p class="muted" aria-live="polite" data-shown={props.items.length}>
      {props.children}
    </p>
    {props.next === null ? null : (
      <button type="button" onClick={props.onMore} disabled={props.more === "loading"}>
        {props.more === "loading" ? "Loading…" : `Load more ${props.things}`}
      </button>
    )}
    {props.more instanceof Error ? <ErrorNote error={props.more} what={`Could not load more ${props.things}`} /> : null}
  </div>
)
