// The rate-limit page: counts the wait down in the page's language, then loads the page that was refused again.
// Until then its button does nothing, so it never leads straight back into the limit.
(function () {
  "use strict";
  var message = document.getElementById("retry-message");
  var note = document.getElementById("retry-countdown");
  if (!message || !note) return;
  var seconds = parseInt(note.getAttribute("data-seconds"), 10) || 1;
  var language = document.documentElement.lang || "en";
  var rules = window.Intl && Intl.PluralRules ? new Intl.PluralRules(language) : null;
  var button = document.getElementById("retry-button");
  if (button) {
    button.setAttribute("href", window.location.href);
    button.addEventListener("click", function (event) { if (seconds > 0) event.preventDefault(); });
  }
  function show() {
    var form = rules ? rules.select(seconds) : (seconds === 1 ? "one" : "other");
    var text = note.getAttribute("data-" + form) || note.getAttribute("data-other") || "";
    message.textContent = text.replace("{count}", seconds.toLocaleString(language));
  }
  function tick() {
    seconds -= 1;
    if (seconds > 0) { show(); window.setTimeout(tick, 1000); return; }
    if (button) button.removeAttribute("aria-disabled");
    window.location.reload();
  }
  window.setTimeout(tick, 1000);
})();
