/*
 * repost.js — finishes a sign-in whose state-binding cookie did not arrive.
 *
 * Some browsers drop the SameSite=None cookie on Apple's cross-site form_post. The server
 * answers with a page holding the same fields in <form id="repost">; submitting it from
 * this (same-origin) page makes the browser send the cookie. Submits once; the visible
 * Continue button does the same without JavaScript.
 */
(() => {
  'use strict';

  let submitted = false;
  const blockSecondSubmit = (event) => event.preventDefault();

  function submitOnce() {
    const form = document.getElementById('repost');
    if (!form || submitted) return;
    submitted = true;
    // The automatic submission is on its way: a tap on Continue must not post it twice.
    form.addEventListener('submit', blockSecondSubmit);
    // A posted field named "submit" would shadow form.submit, so call the prototype's.
    HTMLFormElement.prototype.submit.call(form);
  }

  // Back to this page from the history cache: never resubmit by itself, but let the
  // Continue button work again (the server then explains the state was already used).
  window.addEventListener('pageshow', (event) => {
    if (!event.persisted) return;
    const form = document.getElementById('repost');
    if (form) form.removeEventListener('submit', blockSecondSubmit);
  });

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', submitOnce);
  } else {
    submitOnce();
  }
})();
