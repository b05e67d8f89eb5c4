/**
 * What the hosted verification flow's tests share: a config (the shipped
 * one, mail over a loopback SMTP server, offers with the policies each
 * state needs, a logo), and a browser-like client over `fetch` — a cookie
 * jar, redirects not followed, the CSRF token and form address read from
 * the last page as a browser would submit them.
 */
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { copyConfig, setSettings } from "./daemon.ts"
import type { TestSmtp } from "./smtpServer.ts"

export const SHOP = "https://shop.example"

/** A tiny SVG logo (with a script, which must never run). */
export const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><script>alert(1)</script><circle cx="20" cy="20" r="18" fill="#0a7c5a"/></svg>\n'

const offer = (id: string, shop: string, verification: string) =>
  `id: ${id}\nteam: acme\nname: ${id}\ntargetGroups: [universities]\nstatus: active\nverification:\n  redirectOrigins: ["${shop}"]\n${verification}`

/** The config directory the flow's tests run on, mail going to `smtp`, redirects allowed to `shop` (an origin). */
export const hostedConfig = (
  smtp: TestSmtp,
  smtpCa: string,
  shop: string = SHOP
): { configDir: string; dataDir: string } => {
  const dirs = copyConfig()
  writeFileSync(join(dirs.configDir, "smtp-ca.pem"), smtpCa)
  writeFileSync(join(dirs.configDir, "acme-logo.svg"), LOGO_SVG)
  setSettings(dirs, [
    [
      ["verification", "mail"],
      {
        from: "Acme <offers@acme.example>",
        smtp: { host: "127.0.0.1", port: smtp.port, security: "starttls", ca: "smtp-ca.pem" },
        maxMessagesPerMailbox: 1000
      }
    ],
    [["verification", "redirectOrigins"], [shop]],
    [["rateLimits", "hostedFlow"], { requests: 100000, windowSeconds: 60 }]
  ])
  const write = (id: string, verification: string) =>
    writeFileSync(join(dirs.configDir, "offers", `${id}.yaml`), offer(id, shop, verification))
  write(
    "shop",
    '  resendAfter: "2 seconds"\n  page:\n    displayName: Acme Learning\n    logo: acme-logo.svg\n    accentColor: "#0a7c5a"\n    supportUrl: https://acme.example/help\n    privacyUrl: https://acme.example/privacy\n    privacyNotice: Acme keeps only whether you are eligible, never your address.\n'
  )
  write("links", '  methods: [link]\n  resendAfter: "1 second"\n')
  write("quick", '  lifetime: "1 second"\n')
  write("once", "  maxVerificationsPerAddress: 1\n")
  write("strict", "  maxAttempts: 2\n")
  write("few", '  maxMessagesPerAddress: 1\n  resendAfter: "1 second"\n')
  return dirs
}

export interface PageAnswer {
  readonly status: number
  readonly headers: Headers
  readonly body: string
  /** Where a 303 points. */
  readonly location: string | undefined
}

/** The page's notice text (its problem or news), markup dropped. */
export const noticeOf = (body: string): string | undefined => {
  const match = /<div class="notice[^"]*"[^>]*>(.*?)<\/div>/s.exec(body)
  return match === undefined || match === null
    ? undefined
    : match[1]!
        .replace(/<[^>]+>/g, " ")
        .replace(/\s+/g, " ")
        .trim()
}

export const headingOf = (body: string): string | undefined => /<h1>([^<]*)<\/h1>/.exec(body)?.[1]

/** A browser without JavaScript: cookies kept, forms posted with what the page holds. */
export class FlowClient {
  readonly cookies = new Map<string, string>()
  last: PageAnswer | undefined
  /** The last page that held a form. */
  lastForm: PageAnswer | undefined

  readonly base: string

  constructor(base: string) {
    this.base = base
  }

  private async send(method: "GET" | "POST", path: string, init: RequestInit = {}): Promise<PageAnswer> {
    const response = await fetch(new URL(path, this.base), {
      ...init,
      method,
      redirect: "manual",
      headers: {
        ...(init.headers as Record<string, string> | undefined),
        cookie: [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ")
      }
    })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ""] = cookie.split(";")
      const at = pair.indexOf("=")
      this.cookies.set(pair.slice(0, at), pair.slice(at + 1))
    }
    const answer = {
      status: response.status,
      headers: response.headers,
      body: await response.text(),
      location: response.headers.get("location") ?? undefined
    }
    if (answer.status !== 303) this.last = answer
    if (answer.body.includes('<form method="post"')) this.lastForm = answer
    return answer
  }

  get(path: string, headers: Record<string, string> = {}): Promise<PageAnswer> {
    return this.send("GET", path, { headers })
  }

  /** The CSRF token and form address of the last page that had a form. */
  form(): { csrf: string; action: string } {
    const body = this.lastForm?.body ?? ""
    const csrf = /name="csrf" value="([^"]*)"/.exec(body)?.[1] ?? ""
    const action = (/<form method="post" action="([^"]*)"/.exec(body)?.[1] ?? "").replaceAll("&amp;", "&")
    return { csrf, action }
  }

  /** Posts a form of the last page (`action` field and values), as a browser would. */
  async post(
    action: string,
    values: Record<string, string> = {},
    override: { csrf?: string } = {}
  ): Promise<PageAnswer> {
    const form = this.form()
    const body = new URLSearchParams({ csrf: override.csrf ?? form.csrf, action, ...values })
    return this.send("POST", form.action, {
      body: body.toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" }
    })
  }

  /** Posts, then follows the 303 back (a GET), as a browser does. */
  async submit(action: string, values: Record<string, string> = {}): Promise<PageAnswer> {
    const posted = await this.post(action, values)
    if (posted.status !== 303 || posted.location === undefined || !posted.location.startsWith("/")) return posted
    return this.get(posted.location)
  }
}
