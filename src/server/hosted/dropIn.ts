/**
 * The drop-in for single-page shops, `GET /verify.js`: a classic script a
 * shop loads from the daemon, exposing `Campusgate.verify({ offer |
 * targetGroupId, locale?, returnUrl? })`, which opens the hosted flow in a
 * popup on the person's click and resolves with the eligibility token, and
 * `Campusgate.resultFromLocation()`, which reads the result after the
 * full-page fallback returns.
 *
 * - The popup is the hosted flow with `opener=<the shop's origin>` and a
 *   random `state` (kept in `sessionStorage` for the fallback). The flow
 *   admits an opener by the rule redirects obey (`redirectRefusal`), and its
 *   done page posts `{ type: "campusgate:verified", state, token,
 *   verificationId, expiresAt }` to exactly that origin (`hostedAssets.ts`).
 * - The shop takes a message only from the daemon's origin (that of the
 *   script's own `src`), from the popup it opened, with its `state`; the
 *   popup closed without one rejects the promise (`code: "closed"`).
 * - A blocked popup sends the page itself to the flow with `redirect_uri`
 *   (the `returnUrl`, else the current page) and `state`; the promise then
 *   never settles, as the page goes.
 *
 * Served from memory, compressed once, with an `ETag`; its address is the
 * one a shop writes into its page, so it is cached for five minutes only.
 */
import { makeAsset, type StaticAsset } from "../staticAsset.ts"

/** The `type` of the message a popup's done page posts to its opener. */
export const VERIFIED_MESSAGE_TYPE = "campusgate:verified"

/** The popup's size: the page's column (30rem) with its margins. */
const POPUP = { width: 520, height: 720 }

const SCRIPT = `/* Campusgate drop-in: Campusgate.verify() and Campusgate.resultFromLocation(). */
(function () {
  "use strict";
  var script = document.currentScript;
  var DAEMON = script && script.src ? new URL(script.src).origin : "";
  var KEY = "campusgate.verify.state";
  var RESULT = ["token", "state", "status", "verificationId"];
  var pending;

  function failure(code, message) {
    var error = new Error(message);
    error.name = "CampusgateError";
    error.code = code;
    return error;
  }

  function randomState() {
    var bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.prototype.map.call(bytes, function (b) { return (b + 256).toString(16).slice(1); }).join("");
  }

  function keep(state) {
    try { sessionStorage.setItem(KEY, state); } catch (e) { /* storage off: the popup needs none */ }
  }

  function kept() {
    try { return sessionStorage.getItem(KEY); } catch (e) { return null; }
  }

  function forget() {
    try { sessionStorage.removeItem(KEY); } catch (e) { /* nothing kept */ }
  }

  function flowUrl(options, query) {
    var url = new URL(
      options.offer !== undefined ? "/verify/" + encodeURIComponent(options.offer) : "/verify",
      DAEMON
    );
    if (options.offer === undefined) url.searchParams.set("targetGroupId", options.targetGroupId);
    if (options.locale) url.searchParams.set("locale", options.locale);
    for (var name in query) url.searchParams.set(name, query[name]);
    return url.href;
  }

  /** Where the full-page flow returns: the returnUrl, else this page, without an earlier result. */
  function returnUrlOf(options) {
    var url = new URL(options.returnUrl || location.href, location.href);
    url.hash = "";
    RESULT.forEach(function (name) { url.searchParams.delete(name); });
    return url.href;
  }

  function verify(options) {
    options = options || {};
    if (!DAEMON) {
      return Promise.reject(failure("setup", "load verify.js with <script src> from the Campusgate daemon"));
    }
    if ((options.offer === undefined) === (options.targetGroupId === undefined)) {
      return Promise.reject(failure("options", "give offer or targetGroupId"));
    }
    var state = randomState();
    var redirect = returnUrlOf(options);
    keep(state);
    var left = window.screenX + Math.max(0, (window.outerWidth - ${POPUP.width}) / 2);
    var top = window.screenY + Math.max(0, (window.outerHeight - ${POPUP.height}) / 3);
    var popup = window.open(
      flowUrl(options, { opener: location.origin, state: state, redirect_uri: redirect }),
      "campusgate-verify",
      "popup=yes,width=${POPUP.width},height=${POPUP.height},left=" + Math.round(left) + ",top=" + Math.round(top)
    );
    if (!popup) {
      location.assign(flowUrl(options, { redirect_uri: redirect, state: state }));
      return new Promise(function () {});
    }
    if (pending) pending(failure("superseded", "another verification was started"));
    return new Promise(function (resolve, reject) {
      var done = false;
      var poll;
      function finish() {
        done = true;
        if (pending === fail) pending = undefined;
        window.removeEventListener("message", onMessage);
        clearInterval(poll);
      }
      function fail(error) {
        if (done) return;
        finish();
        reject(error);
      }
      function onMessage(event) {
        if (done || event.origin !== DAEMON || event.source !== popup) return;
        var data = event.data;
        if (!data || data.type !== "${VERIFIED_MESSAGE_TYPE}" || data.state !== state || typeof data.token !== "string") return;
        finish();
        forget();
        if (!popup.closed) popup.close();
        resolve({ token: data.token, state: data.state, verificationId: data.verificationId, expiresAt: data.expiresAt });
      }
      pending = fail;
      window.addEventListener("message", onMessage);
      poll = setInterval(function () {
        if (done || !popup.closed) return;
        clearInterval(poll);
        // A message the popup posted as it closed may still be on its way.
        setTimeout(function () {
          fail(failure("closed", "the verification window was closed before the address was confirmed"));
        }, 500);
      }, 250);
      popup.focus();
    });
  }

  /** The result the full-page flow returned with, or null; throws when it was not asked for from this tab. */
  function resultFromLocation() {
    var url = new URL(location.href);
    var state = url.searchParams.get("state");
    if (state === null || !url.searchParams.has("verificationId")) return null;
    var result = { token: url.searchParams.get("token"), state: state, status: url.searchParams.get("status"), verificationId: url.searchParams.get("verificationId") };
    RESULT.forEach(function (name) { url.searchParams.delete(name); });
    history.replaceState(history.state, "", url.href);
    var expected = kept();
    if (expected === null || expected !== state) {
      throw failure("state", "the result in the address was not asked for from this tab");
    }
    forget();
    if (result.status !== "verified" || !result.token) {
      throw failure("not-verified", "the address was not confirmed");
    }
    return result;
  }

  window.Campusgate = { verify: verify, resultFromLocation: resultFromLocation };
})();
`

let asset: StaticAsset | undefined

/** The drop-in script, made on first use. */
export const dropInAsset = (): StaticAsset => {
  asset ??= makeAsset(SCRIPT, {
    contentType: "text/javascript; charset=utf-8",
    cacheControl: "public, max-age=300"
  })
  return asset
}
