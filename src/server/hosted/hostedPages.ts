/**
 * The hosted verification page's HTML, one function per step, pure: the
 * email form, the code form or "check your inbox" (with resend and its
 * countdown), done (for a popup, with the result its script hands the
 * opener and, for a page without script, a link back), a finished verification (expired, too many wrong codes,
 * redemption limit reached) with a way to start again, and the pages that
 * answer a problem (not found, a refused redirect, a form that expired,
 * too many requests, the service unavailable). Plain forms that work
 * without JavaScript; each has its label, the page its `lang`, the first
 * problem is focused (`autofocus`, and by the script) and described to the
 * field it concerns. Styles come from the same-origin stylesheet and one
 * `<style>` element carrying the request's CSP nonce (the accent colour).
 */
import type { HostedWordKey, HostedWords } from "../../domain/hostedPageWords.ts"
import { escapeHtml } from "../../domain/MessageTemplate.ts"
import type { Notice } from "./flowCookie.ts"
import { hostedAssets } from "./hostedAssets.ts"

/** How the page presents the offer (`verification.page`, with defaults filled in). */
export interface Presentation {
  readonly displayName: string
  readonly logoUrl?: string | undefined
  readonly accentColor: string
  readonly supportUrl?: string | undefined
  readonly privacyUrl?: string | undefined
  readonly privacyNotice?: string | undefined
}

export interface PageContext {
  readonly locale: string
  readonly words: HostedWords
  readonly presentation: Presentation
  /** The CSP nonce of this answer. */
  readonly nonce: string
  /** Where the forms post: the flow's own address (path and query). */
  readonly action: string
  readonly csrf?: string | undefined
}

/** What a popup's done page hands the window that opened it (`postMessage` to exactly `opener`). */
export interface Handoff {
  /** The opener's origin, checked against the offer's `redirectOrigins`. */
  readonly opener: string
  /** The message posted: the drop-in's format (`dropIn.ts`). */
  readonly message: {
    readonly type: string
    readonly state: string | null
    readonly token: string
    readonly verificationId: string
    readonly expiresAt: string
  }
  /** The caller's `redirect_uri` with the result, the way back without script (or once the opener is gone). */
  readonly returnUrl?: string | undefined
  /** Its host, which the link names. */
  readonly site?: string | undefined
}

export type Step =
  | { readonly kind: "email"; readonly notice?: Notice | undefined; readonly email?: string | undefined }
  | {
      readonly kind: "code" | "link"
      readonly email: string
      readonly resendSeconds: number
      readonly notice?: Notice | undefined
    }
  | { readonly kind: "done"; readonly handoff?: Handoff | undefined }
  /** A verification that ended without success: what happened, and a way to start again. */
  | { readonly kind: "ended"; readonly notice: Notice }
  /** A page that answers a problem; `retry` links back to the flow. */
  | { readonly kind: "problem"; readonly notice: Notice; readonly retry?: boolean }

/** A word with its placeholders filled in, escaped. */
export const fill = (
  words: HostedWords,
  key: HostedWordKey,
  values: Readonly<Record<string, string | number>> = {}
): string =>
  escapeHtml(words[key]).replace(/\{\{\s*([A-Za-z]+)\s*\}\}/g, (whole, name: string) =>
    values[name] === undefined ? whole : escapeHtml(String(values[name]))
  )

/** The text of a notice: its word, and for a refused address the reason in plain words. */
const noticeText = (words: HostedWords, notice: Notice): string => {
  const main = fill(words, notice.key as HostedWordKey, notice.values)
  const reason = notice.values?.reason
  return typeof reason === "string" && reason in words ? `${main} ${fill(words, reason as HostedWordKey)}` : main
}

const INFO: ReadonlySet<string> = new Set(["resent"])

const noticeBlock = (words: HostedWords, notice: Notice | undefined): string => {
  if (notice === undefined) return ""
  const info = INFO.has(notice.key)
  // A problem that concerns no field takes the focus itself; one that does is the field's description.
  const focus = notice.field === undefined && !info ? " autofocus" : ""
  return `<div class="notice ${info ? "info" : "error"}" id="notice" role="${info ? "status" : "alert"}" tabindex="-1"${focus}>${info ? "" : `<h2>${fill(words, "errorTitle")}</h2>`}<p>${noticeText(words, notice)}</p></div>`
}

/** `#000` or `#fff`, whichever reads better on `colour` (WCAG relative luminance). */
export const textOn = (colour: string): string => {
  const hex = colour.length === 4 ? colour.replace(/[0-9a-f]/gi, (c) => c + c).slice(1) : colour.slice(1)
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = Number.parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  })
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b! > 0.179 ? "#000" : "#fff"
}

const hidden = (context: PageContext, action: string): string =>
  `<input type="hidden" name="csrf" value="${escapeHtml(context.csrf ?? "")}"><input type="hidden" name="action" value="${action}">`

const fieldAttributes = (notice: Notice | undefined, field: "email" | "code"): string =>
  notice?.field === field ? ' aria-invalid="true" aria-describedby="notice" autofocus' : ""

const restartForm = (context: PageContext, key: HostedWordKey, className = "secondary"): string =>
  `<form method="post" action="${escapeHtml(context.action)}" class="${className}">${hidden(context, "restart")}<button type="submit"${className === "inline" ? ' class="link"' : ""}>${fill(context.words, key)}</button></form>`

const resendBlock = (context: PageContext, seconds: number): string => {
  const { words } = context
  const text = seconds > 0 ? fill(words, "resendWait", { seconds }) : fill(words, "resendReady")
  return `<p id="resend-status" class="muted" aria-live="polite" aria-atomic="true" data-seconds="${seconds}" data-wait="${escapeHtml(words.resendWait)}" data-ready="${escapeHtml(words.resendReady)}">${text}</p><form method="post" action="${escapeHtml(context.action)}" class="inline secondary">${hidden(context, "resend")}<button type="submit" id="resend">${fill(words, "resend")}</button></form>`
}

/**
 * A popup's done page: the result in `data-` attributes for the page's own script (the CSP allows no inline
 * script), which posts it to the opener and closes the window; without script, words and a link back.
 */
const handoff = (context: PageContext, given: Handoff): string => {
  const { words } = context
  const link =
    given.returnUrl === undefined
      ? ""
      : `<p><a class="button" id="return" href="${escapeHtml(given.returnUrl)}">${fill(words, "backTo", { site: given.site ?? "" })}</a></p>`
  return `<p>${fill(words, "doneReturn")}</p>${link}<div id="handoff" hidden data-opener="${escapeHtml(given.opener)}" data-message="${escapeHtml(JSON.stringify(given.message))}"></div>`
}

const body = (context: PageContext, step: Step): { heading: HostedWordKey; html: string } => {
  const { words } = context
  const action = escapeHtml(context.action)
  switch (step.kind) {
    case "email":
      return {
        heading: "heading",
        html: `${noticeBlock(words, step.notice)}<p>${fill(words, "intro")}</p><form method="post" action="${action}">${hidden(context, "start")}<label for="email">${fill(words, "emailLabel")}</label><input id="email" name="email" type="email" autocomplete="email" required maxlength="320" value="${escapeHtml(step.email ?? "")}"${fieldAttributes(step.notice, "email")}${step.notice === undefined ? " autofocus" : ""}><button type="submit">${fill(words, "submit")}</button></form>`
      }
    case "code":
      return {
        heading: "codeHeading",
        html: `${noticeBlock(words, step.notice)}<p>${fill(words, "codeSent", { email: step.email })}</p><form method="post" action="${action}">${hidden(context, "confirm")}<label for="code">${fill(words, "codeLabel")}</label><input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]*" maxlength="12" required${fieldAttributes(step.notice, "code")}${step.notice === undefined ? " autofocus" : ""}><button type="submit">${fill(words, "confirm")}</button></form>${resendBlock(context, step.resendSeconds)}${restartForm(context, "otherAddress", "inline")}`
      }
    case "link":
      return {
        heading: "linkHeading",
        html: `${noticeBlock(words, step.notice)}<p>${fill(words, "linkSent", { email: step.email })}</p><p><a class="button" href="${action}">${fill(words, "linkContinue")}</a></p>${resendBlock(context, step.resendSeconds)}${restartForm(context, "otherAddress", "inline")}`
      }
    case "done":
      return {
        heading: "doneHeading",
        html: step.handoff === undefined ? `<p>${fill(words, "done")}</p>` : handoff(context, step.handoff)
      }
    case "ended":
      return {
        heading: "errorTitle",
        html: `${noticeBlock(words, step.notice)}${restartForm(context, "startAgain", "")}`
      }
    case "problem":
      return {
        heading: "errorTitle",
        html: `${noticeBlock(words, step.notice)}${step.retry === true ? `<p><a class="button" href="${action}">${fill(words, "startAgain")}</a></p>` : ""}`
      }
  }
}

const footer = (context: PageContext): string => {
  const { presentation: p, words } = context
  const links = [
    p.supportUrl === undefined
      ? ""
      : `<a href="${escapeHtml(p.supportUrl)}" rel="noreferrer">${fill(words, "support")}</a>`,
    p.privacyUrl === undefined
      ? ""
      : `<a href="${escapeHtml(p.privacyUrl)}" rel="noreferrer">${fill(words, "privacy")}</a>`
  ].join("")
  const notice = p.privacyNotice === undefined ? "" : `<p>${escapeHtml(p.privacyNotice)}</p>`
  return links === "" && notice === "" ? "" : `<footer>${links === "" ? "" : `<p>${links}</p>`}${notice}</footer>`
}

/** The whole page of a step. */
export const renderPage = (context: PageContext, step: Step): string => {
  const { presentation: p } = context
  const { css, js } = hostedAssets()
  const { heading, html } = body(context, step)
  const title = fill(context.words, heading)
  const logo = p.logoUrl === undefined ? "" : `<img src="${escapeHtml(p.logoUrl)}" alt="">`
  return `<!doctype html>
<html lang="${escapeHtml(context.locale)}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer"><title>${title} – ${escapeHtml(p.displayName)}</title><link rel="stylesheet" href="/verify/assets/verify.css?v=${css.hash}"><style nonce="${context.nonce}">:root{--accent:${p.accentColor};--on-accent:${textOn(p.accentColor)}}</style><script src="/verify/assets/verify.js?v=${js.hash}" defer></script></head>
<body><main><div class="brand">${logo}<p>${escapeHtml(p.displayName)}</p></div><h1>${title}</h1>${html}${footer(context)}</main></body></html>
`
}
