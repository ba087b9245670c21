"""A small Chrome DevTools Protocol client: starts headless Chromium and talks to one page over its websocket."""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import websocket

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Support"))
from ports import free_port  # noqa: E402,F401  (the browser runners import it from here)


class CDPError(Exception):
    pass


class Browser:
    """Headless Chromium with a throwaway profile; `page` is its first tab."""

    def __init__(self, profile_dir, extra_args=()):
        executable = shutil.which("chromium") or shutil.which("chromium-browser")
        if not executable:
            raise RuntimeError("chromium is not installed (scripts/ensure-dependencies chromium installs it)")
        self.port = free_port()
        self.process = subprocess.Popen(
            [executable, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--hide-scrollbars", "--font-render-hinting=none",
             f"--remote-debugging-port={self.port}", f"--user-data-dir={profile_dir}", *extra_args, "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        targets = None
        for _ in range(100):
            try:
                targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json", timeout=2))
                if any(t["type"] == "page" for t in targets):
                    break
            except OSError:
                pass
            time.sleep(0.1)
        if not targets:
            self.close()
            raise RuntimeError("chromium did not open its debugging port")
        page = next(t for t in targets if t["type"] == "page")
        self.page = Page(page["webSocketDebuggerUrl"])

    def close(self):
        try:
            self.page.close()
        except Exception:
            pass
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Page:
    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def close(self):
        self.ws.close()

    def _receive(self, timeout):
        self.ws.settimeout(timeout)
        try:
            return json.loads(self.ws.recv())
        except websocket.WebSocketTimeoutException:
            return None

    def call(self, method, timeout=30, **params):
        self.next_id += 1
        wanted = self.next_id
        self.ws.send(json.dumps({"id": wanted, "method": method, "params": params}))
        deadline = time.time() + timeout
        while time.time() < deadline:
            message = self._receive(max(0.05, deadline - time.time()))
            if message is None:
                continue
            if message.get("id") == wanted:
                if "error" in message:
                    raise CDPError(f"{method}: {message['error'].get('message')}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)
        raise CDPError(f"{method}: no answer within {timeout} s")

    def wait_event(self, method, timeout=10, predicate=lambda params: True):
        deadline = time.time() + timeout
        while True:
            for index, event in enumerate(self.events):
                if event["method"] == method and predicate(event.get("params", {})):
                    return self.events.pop(index)["params"]
            if time.time() >= deadline:
                return None
            message = self._receive(max(0.05, min(0.5, deadline - time.time())))
            if message and "method" in message:
                self.events.append(message)

    def js(self, expression, await_promise=False, timeout=30):
        """The value of `expression` in the page, or None while the page is between documents."""
        try:
            result = self.call("Runtime.evaluate", timeout=timeout, expression=expression, returnByValue=True,
                               awaitPromise=await_promise)
        except CDPError:
            return None
        if "exceptionDetails" in result:
            return None
        return result.get("result", {}).get("value")

    def wait_for(self, expression, timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.1)
        return None

    def navigate(self, url, timeout=10):
        self.call("Page.navigate", url=url)
        return self.wait_for("document.readyState === 'complete' && location.href !== 'about:blank'", timeout)

    def settle(self, loading=False):
        """Waits until the current document finished loading and fonts are laid out. With `loading`, the
        document is held on purpose (a paused script) and only layout is waited for."""
        if not loading:
            self.wait_for("document.readyState === 'complete'", 10)
            self.js("document.fonts ? document.fonts.ready.then(() => true) : true", await_promise=True, timeout=5)
        self.js("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))",
                await_promise=True, timeout=5)
        time.sleep(0.1)


def clean_dir(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path, exist_ok=True)
