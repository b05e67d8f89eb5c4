/**
 * The hosted verification page's two files, served by the daemon from
 * memory (`/verify/assets/verify.css` and `/verify/assets/verify.js`,
 * compressed once, with an `ETag`; pages name them with their content hash,
 * so they are cached for good). The page works without the script; the
 * script only improves it: the resend countdown (in a polite live region,
 * the button enabled when it ends), focus on the first
 * problem, one submission per click, and on a popup's done page the
 * hand-over: the result posted to the opener at exactly the origin the
 * flow was opened for (never `"*"`), then the window closed; with the
 * opener gone, the page follows its link back instead.
 */
import { makeAsset, type StaticAsset } from "../staticAsset.ts"

const CSS = `:root{--accent:#1d4ed8;--on-accent:#fff;color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#f6f7f9}
main{max-width:30rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:.75rem;box-shadow:0 1px 3px rgba(0,0,0,.12)}
.brand{display:flex;align-items:center;gap:.75rem;margin-bottom:1rem}
.brand img{max-height:2.5rem;max-width:8rem}
.brand p{margin:0;font-weight:600}
h1{font-size:1.4rem;margin:.25rem 0 1rem}
label{display:block;font-weight:600;margin:.75rem 0 .25rem}
input{width:100%;padding:.6rem .7rem;font:inherit;border:1px solid #6b7280;border-radius:.4rem}
input[aria-invalid=true]{border-color:#b42318;border-width:2px}
input:focus,button:focus,a:focus{outline:3px solid var(--accent);outline-offset:2px}
button,.button{display:inline-block;margin-top:1rem;padding:.6rem 1.1rem;font:inherit;font-weight:600;border:0;border-radius:.4rem;background:var(--accent);color:var(--on-accent);cursor:pointer;text-decoration:none}
button[disabled]{opacity:.6;cursor:not-allowed}
.secondary button,button.secondary{background:#e5e7eb;color:#1f2328}
.link{background:none;color:#1f2328;text-decoration:underline;padding:0;font-weight:400}
form.inline{display:inline-block;margin-right:1rem}
.notice{padding:.75rem 1rem;border-radius:.4rem;margin:1rem 0}
.notice.error{background:#fef3f2;border:1px solid #b42318;color:#7a271a}
.notice.info{background:#eff8ff;border:1px solid #175cd3;color:#194185}
.notice h2{font-size:1rem;margin:0 0 .25rem}
.notice p{margin:0}
.muted{color:#4b5563;font-size:.9rem}
footer{margin-top:1.5rem;border-top:1px solid #e5e7eb;padding-top:.75rem;font-size:.875rem;color:#4b5563}
footer a{color:#1f2328;margin-right:1rem}
`

const JS = `"use strict";
(function () {
  var handoff = document.getElementById("handoff");
  if (handoff) {
    var opener = window.opener;
    var back = document.getElementById("return");
    if (opener && !opener.closed) {
      opener.postMessage(JSON.parse(handoff.getAttribute("data-message")), handoff.getAttribute("data-opener"));
      window.close();
    } else if (back) {
      window.location.replace(back.href);
    }
    return;
  }
  var status = document.getElementById("resend-status");
  var button = document.getElementById("resend");
  if (status && button) {
    var left = Number(status.getAttribute("data-seconds")) || 0;
    var wait = status.getAttribute("data-wait") || "";
    var ready = status.getAttribute("data-ready") || "";
    var tick = function () {
      if (left <= 0) {
        button.disabled = false;
        status.textContent = ready;
        return;
      }
      button.disabled = true;
      status.textContent = wait.replace("{{seconds}}", String(left));
      left -= 1;
      setTimeout(tick, 1000);
    };
    tick();
  }
  var first = document.querySelector("[aria-invalid=true]") || document.getElementById("notice");
  if (first && document.activeElement !== first) first.focus();
  var forms = document.querySelectorAll("form[method=post]");
  for (var i = 0; i < forms.length; i++) {
    forms[i].addEventListener("submit", function (event) {
      var form = event.currentTarget;
      if (form.getAttribute("data-sent") === "1") event.preventDefault();
      else form.setAttribute("data-sent", "1");
    });
  }
})();
`

export interface HostedAssets {
  readonly css: StaticAsset
  readonly js: StaticAsset
}

let assets: HostedAssets | undefined

/** The two files, made on first use. */
export const hostedAssets = (): HostedAssets => {
  assets ??= {
    css: makeAsset(CSS, {
      contentType: "text/css; charset=utf-8",
      cacheControl: "public, max-age=31536000, immutable"
    }),
    js: makeAsset(JS, {
      contentType: "text/javascript; charset=utf-8",
      cacheControl: "public, max-age=31536000, immutable"
    })
  }
  return assets
}
