/*
 * apple-bridge.js — upgrades the Sign in with Apple link on /login.
 *
 * The page renders one plain link that works without any script:
 *   <a id="apple-signin" href="AUTHORIZE_URL" data-state data-nonce data-redirect-uri
 *      data-client-id data-scope [data-use-js-sdk="1" data-sdk-src="APPLE_SDK_URL" [data-use-popup="1"]]
 *      class="apple-button">
 * Following it takes the browser to Apple, which form_posts back to /apple_redirect.
 * This script is the page's only script and loads first; nothing of Apple's is fetched before a tap, so a
 * slow or unreachable CDN can never hold the page. On each tap it picks one mode:
 *
 *  1. iOS hybrid app (WKWebView). If the app registered a script message handler named
 *     "appleLogin" (our documented bridge, see docs/webview-bridge.md) or
 *     "appleLoginButtonClick" (older apps), the tap posts {state, nonce, redirectURI} to native
 *     code instead of navigating, and Apple's SDK is never looked for. Native code runs
 *     ASAuthorizationAppleIDProvider (request.nonce = nonce, or its SHA-256 hex) and POSTs
 *     id_token, code, state (and user) to redirectURI inside the same webview.
 *  2. Apple's JS SDK (server started with APPLE_JS_SDK=1: the link carries data-use-js-sdk="1").
 *     The tap loads data-sdk-src (once), waits at most SDK_TIMEOUT_MS, then AppleID.auth.init()
 *     in redirect mode and AppleID.auth.signIn(); Apple form_posts back. If the SDK does not
 *     arrive in time (blocked, offline, a CDN that never answers) or throws, the plain link is
 *     followed, which reaches the same Apple sign-in.
 *     With data-use-popup="1" (APPLE_JS_POPUP=1) the SDK runs in popup mode instead: Apple's popup hands
 *     {authorization: {code, id_token, state}, user?} back to this page, which posts exactly the fields of
 *     Apple's form_post (user as JSON text) to redirectURI in a same-origin form, so /apple_redirect checks
 *     them as it checks Apple's own post (binding cookie, state, nonce, c_hash, code exchange). A closed or
 *     cancelled popup leaves the person here with the "Sign-in cancelled" notice; any other failure follows
 *     the plain link.
 *  3. Anything else: the browser follows the link to Apple.
 *
 * While a sign-in is under way the button shows a busy state (aria-busy, and a status line for
 * screen readers); it is cleared when the page comes back from the history cache or native code
 * reports nothing (after BUSY_RESET_MS).
 * In every mode window.AppleSignInBridge = {state, nonce, redirectURI} is exposed for native code
 * that prefers evaluateJavaScript to message handlers.
 * ES2017, no dependencies, no inline code (the page's CSP allows scripts from 'self' only).
 */
(() => {
  'use strict';

  const NATIVE_HANDLERS = ['appleLogin', 'appleLoginButtonClick'];
  const SDK_TIMEOUT_MS = 4000;
  const BUSY_RESET_MS = 8000;
  /** Apple's errors for a person who closed the popup or pressed Cancel in it. */
  const POPUP_CANCELLED = ['popup_closed_by_user', 'user_cancelled_authorize'];
  /** The fields of Apple's form_post that the popup's answer carries; /apple_redirect reads these. */
  const AUTHORIZATION_FIELDS = ['state', 'code', 'id_token'];

  function nativeHandler() {
    const handlers = window.webkit && window.webkit.messageHandlers;
    if (!handlers) return null;
    for (const name of NATIVE_HANDLERS) {
      const handler = handlers[name];
      if (handler && typeof handler.postMessage === 'function') return handler;
    }
    return null;
  }

  function isPlainActivation(event) {
    return !event.defaultPrevented && event.button === 0 &&
      !event.metaKey && !event.ctrlKey && !event.shiftKey && !event.altKey;
  }

  function sdkAvailable() {
    return Boolean(window.AppleID && window.AppleID.auth && typeof window.AppleID.auth.init === 'function');
  }

  let sdkLoading = null;

  /** Resolves true once Apple's SDK is usable, false if it fails or takes longer than SDK_TIMEOUT_MS. */
  function loadSdk(src) {
    if (sdkAvailable()) return Promise.resolve(true);
    if (!src) return Promise.resolve(false);
    if (!sdkLoading) {
      sdkLoading = new Promise((resolve) => {
        const script = document.createElement('script');
        script.src = src;
        script.async = true;
        script.onload = () => resolve(sdkAvailable());
        script.onerror = () => resolve(false);
        document.head.appendChild(script);
      });
    }
    const timeout = new Promise((resolve) => window.setTimeout(() => resolve(false), SDK_TIMEOUT_MS));
    return Promise.race([sdkLoading, timeout]);
  }

  function init() {
    const link = document.getElementById('apple-signin');
    if (!link || link.dataset.bridgeReady === '1') return;
    link.dataset.bridgeReady = '1';

    const data = link.dataset;
    const params = Object.freeze({
      state: data.state || '',
      nonce: data.nonce || '',
      redirectURI: data.redirectUri || '',
    });
    window.AppleSignInBridge = params;

    const status = document.getElementById('apple-signin-status');
    const cancelledNotice = document.getElementById('apple-signin-cancelled');
    const usePopup = data.useJsSdk === '1' && data.usePopup === '1';
    let busyTimer = 0;
    function setBusy(busy) {
      window.clearTimeout(busyTimer);
      if (busy) {
        link.setAttribute('aria-busy', 'true');
        link.classList.add('is-busy');
        if (status) status.textContent = status.dataset.busyText || '';
        busyTimer = window.setTimeout(() => setBusy(false), BUSY_RESET_MS);
      } else {
        link.removeAttribute('aria-busy');
        link.classList.remove('is-busy');
        if (status) status.textContent = '';
      }
    }
    // Back from Apple through the history cache: the button must not stay busy.
    window.addEventListener('pageshow', (event) => { if (event.persisted) setBusy(false); });

    function followLink() {
      window.location.assign(link.href);
    }

    /** Posts the popup's answer to the bridge as Apple's form_post would, from this page (same origin). */
    function postAuthorization(answer) {
      const authorization = (answer && answer.authorization) || {};
      const form = document.createElement('form');
      form.method = 'post';
      form.action = params.redirectURI;
      form.hidden = true;
      const fields = AUTHORIZATION_FIELDS.map((name) => [name, authorization[name]]);
      if (answer && answer.user) {
        fields.push(['user', typeof answer.user === 'string' ? answer.user : JSON.stringify(answer.user)]);
      }
      for (const [name, value] of fields) {
        if (typeof value !== 'string') continue;
        const input = document.createElement('input');
        input.type = 'hidden';
        input.name = name;
        input.value = value;
        form.appendChild(input);
      }
      document.body.appendChild(form);
      form.submit();
    }

    /** Apple's popup is open: the button stays busy until the popup answers, however long that takes. */
    function stayBusyUntilAnswered() {
      window.clearTimeout(busyTimer);
    }

    function popupFailed(failure) {
      if (!POPUP_CANCELLED.includes(failure && failure.error)) { followLink(); return; }
      setBusy(false);
      if (cancelledNotice) {
        cancelledNotice.hidden = false;
        if (status) status.textContent = cancelledNotice.textContent;
      }
    }

    function signInWithSdk() {
      loadSdk(data.sdkSrc).then((ready) => {
        if (!ready) { followLink(); return; }
        try {
          window.AppleID.auth.init({
            clientId: data.clientId || '',
            scope: data.scope || '',
            redirectURI: params.redirectURI,
            state: params.state,
            nonce: params.nonce,
            usePopup,
          });
          const result = window.AppleID.auth.signIn();
          const settles = result && typeof result.then === 'function';
          if (usePopup) {
            if (!settles) { followLink(); return; }
            stayBusyUntilAnswered();
            result.then(postAuthorization, popupFailed);
          } else if (settles) {
            result.catch(followLink);
          }
        } catch (error) {
          followLink();
        }
      });
    }

    link.addEventListener('click', (event) => {
      if (!isPlainActivation(event)) return;
      if (link.getAttribute('aria-busy') === 'true') {
        event.preventDefault(); // a double tap would open two Apple sheets or two sign-ins
        return;
      }

      const handler = nativeHandler();
      if (handler) {
        event.preventDefault();
        setBusy(true);
        try {
          handler.postMessage({ state: params.state, nonce: params.nonce, redirectURI: params.redirectURI });
        } catch (error) {
          followLink();
        }
        return;
      }

      setBusy(true);
      if (cancelledNotice) cancelledNotice.hidden = true;
      if (data.useJsSdk === '1') {
        event.preventDefault();
        signInWithSdk();
      }
      // Otherwise: the default action follows the authorize link.
    });
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', init);
  } else {
    init();
  }
})();
