/*
 * apple-bridge.js — upgrades the Sign in with Apple link on /login.
 *
 * The page renders one plain link that works without any script:
 *   <a id="apple-signin" href="AUTHORIZE_URL" data-state data-nonce data-redirect-uri
 *      data-client-id data-scope [data-use-js-sdk="1"] class="apple-button">
 * Following it takes the browser to Apple, which form_posts back to /apple_redirect.
 * On top of that this script picks one mode per tap:
 *
 *  1. iOS hybrid app (WKWebView). If the app registered a script message handler named
 *     "appleLogin" (our documented bridge, see docs/webview-bridge.md) or
 *     "appleLoginButtonClick" (the seed-004 app), the tap posts
 *     {state, nonce, redirectURI} to native code instead of navigating. Native code runs
 *     ASAuthorizationAppleIDProvider (request.nonce = nonce, or its SHA-256 hex) and POSTs
 *     id_token, code, state (and user) to redirectURI inside the same webview.
 *  2. Apple's JS SDK (server started with APPLE_JS_SDK=1: the link carries
 *     data-use-js-sdk="1" and the page loads appleid.auth.js first). AppleID.auth.init()
 *     in redirect mode; the tap calls AppleID.auth.signIn() and Apple form_posts back.
 *     If the SDK did not load (blocked, offline) or throws, the plain link is followed.
 *  3. Anything else: nothing to do, the browser follows the link to Apple.
 *
 * In every mode window.AppleSignInBridge = {state, nonce, redirectURI} is exposed for
 * native code that prefers evaluateJavaScript to message handlers.
 * ES2017, no dependencies, no inline code (the page's CSP allows scripts from 'self' only).
 */
(() => {
  'use strict';

  const NATIVE_HANDLERS = ['appleLogin', 'appleLoginButtonClick'];

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

    let sdkReady = false;
    if (data.useJsSdk === '1' && !nativeHandler() &&
        window.AppleID && window.AppleID.auth && typeof window.AppleID.auth.init === 'function') {
      try {
        window.AppleID.auth.init({
          clientId: data.clientId || '',
          scope: data.scope || '',
          redirectURI: params.redirectURI,
          state: params.state,
          nonce: params.nonce,
          usePopup: false,
        });
        sdkReady = true;
      } catch (error) {
        sdkReady = false; // keep the plain link
      }
    }

    let busyUntil = 0;
    link.addEventListener('click', (event) => {
      if (!isPlainActivation(event)) return;

      const handler = nativeHandler();
      if (handler) {
        event.preventDefault();
        const now = Date.now();
        if (now < busyUntil) return; // a double tap would open two Apple sheets
        busyUntil = now + 2000;
        try {
          handler.postMessage({ state: params.state, nonce: params.nonce, redirectURI: params.redirectURI });
        } catch (error) {
          busyUntil = 0;
          window.location.assign(link.href);
        }
        return;
      }

      if (sdkReady) {
        event.preventDefault();
        try {
          const result = window.AppleID.auth.signIn();
          if (result && typeof result.catch === 'function') {
            result.catch(() => window.location.assign(link.href));
          }
        } catch (error) {
          window.location.assign(link.href);
        }
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
