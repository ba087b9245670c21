/*
 * local-time.js — shows each <time datetime="…"> in the reader's own time zone, in the page's language.
 * The server renders the same moment in UTC; without this script (or without Intl) that text stays.
 */
(() => {
  'use strict';

  function localize() {
    if (typeof Intl === 'undefined' || !Intl.DateTimeFormat) return;
    const language = document.documentElement.lang || undefined;
    let format;
    try {
      format = new Intl.DateTimeFormat(language, { dateStyle: 'long', timeStyle: 'short' });
    } catch (error) {
      return;
    }
    for (const element of document.querySelectorAll('time[datetime]')) {
      const date = new Date(element.getAttribute('datetime'));
      if (!Number.isNaN(date.getTime())) element.textContent = format.format(date);
    }
  }

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', localize);
  } else {
    localize();
  }
})();
