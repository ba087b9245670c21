"""Drives headless Chromium through a whole web sign-in against a running `apple-signin-bridge dev`:
/login -> the simulator's consent page -> Continue -> /session. Exits 1 unless the session page shows up.
Usage: browser_flow.py BASE_URL PROFILE_DIR SCREENSHOT.png"""
import json, time, sys, subprocess, urllib.request, websocket
port = 9333
proc = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", f"--remote-debugging-port={port}",
                         "--user-data-dir=" + sys.argv[2], "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
for _ in range(50):
    try:
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json")); break
    except Exception: time.sleep(0.2)
page = [t for t in targets if t["type"] == "page"][0]
ws = websocket.create_connection(page["webSocketDebuggerUrl"])
n = 0
def call(method, **params):
    global n; n += 1
    ws.send(json.dumps({"id": n, "method": method, "params": params}))
    while True:
        m = json.loads(ws.recv())
        if m.get("id") == n: return m.get("result")
def js(expr):
    return call("Runtime.evaluate", expression=expr, returnByValue=True)["result"].get("value")
def wait_for(expr, timeout=10):
    end = time.time() + timeout
    while time.time() < end:
        v = js(expr)
        if v: return v
        time.sleep(0.2)
    return None
call("Page.enable")
call("Page.navigate", url=sys.argv[1] + "/login")
wait_for("document.getElementById('apple-signin') !== null")
js("document.getElementById('apple-signin').click()")
wait_for("location.pathname === '/auth/authorize' && document.readyState === 'complete'")
print("at:", js("location.href.split('?')[0]"))
js("document.querySelector('button[value=continue]').click()")
js_ok = wait_for("location.pathname === '/session'", 15)
print("final:", js("location.pathname"), "|", js("document.querySelector('h1') && document.querySelector('h1').innerText"))
print("flow:", js("(document.getElementById('flow')||{}).innerText"), "| nonce:", js("(document.getElementById('nonce-verified')||{}).innerText"))
shot = call("Page.captureScreenshot", format="png")
import base64; open(sys.argv[3], "wb").write(base64.b64decode(shot["data"]))
proc.terminate()
sys.exit(0 if js_ok else 1)
