# SPDX-License-Identifier: Apache-2.0
"""browser.py - headless Chromium driven over the DevTools protocol, from
the standard library only: the HTML report's tests (tests/cli/
test_report_html.py) and bench/bench_report.sh load pages with it.

Chromium is Debian's (`chromium-headless-shell`, or `chromium`;
scripts/install-deps.sh installs the first).  It is started with
--remote-debugging-pipe: the protocol's JSON messages, NUL-terminated, go
in on fd 3 and come back on fd 4, so no port and no websocket are needed.
The flags are the ones this machine's closed network needs (no background
networking, component updates or sync, no QUIC), --no-sandbox because the
tests run as root, and a fresh --user-data-dir per browser.

What a load reports (Page): every console message of type error or
assert, every uncaught exception (Runtime.exceptionThrown), every browser
log entry of level error, and every network request other than the page
itself -- a self-contained report makes none.
"""
import base64
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

CANDIDATES = ("chromium-headless-shell", "chromium")
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--hide-scrollbars", "--mute-audio")


def find_chromium():
    """The path of Debian's headless Chromium, or an AssertionError saying
    how to install it (the tests never skip for a missing browser)."""
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    raise AssertionError("no headless Chromium (%s) on PATH: run scripts/install-deps.sh"
                         % " or ".join(CANDIDATES))


class BrowserError(Exception):
    pass


class Page:
    """One loaded page: the problems it logged, and calls into it."""

    def __init__(self, browser, session, url):
        self.browser = browser
        self.session = session
        self.url = url
        self.errors = []    # console errors, exceptions, error log entries
        self.requests = []  # URLs requested other than the page itself
        self.load_s = None  # navigate -> load event, wall clock

    def evaluate(self, expression, timeout=30):
        """The value of @expression (returned by value; an exception in it
        is a BrowserError)."""
        r = self.browser.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                  "awaitPromise": True}, self.session, timeout)
        if "exceptionDetails" in r:
            raise BrowserError("evaluate %r: %s" % (expression[:80], json.dumps(r["exceptionDetails"])[:2000]))
        return r["result"].get("value")

    def screenshot(self, path, width=1280, height=None):
        """A PNG of the page at @width CSS pixels, its whole height (or
        @height)."""
        h = height or int(self.evaluate("Math.ceil(document.documentElement.scrollHeight)"))
        self.browser.call("Emulation.setDeviceMetricsOverride",
                          {"width": width, "height": h, "deviceScaleFactor": 1, "mobile": False},
                          self.session)
        r = self.browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True},
                              self.session, 60)
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))
        return path


class Browser:
    """A headless Chromium for one test or benchmark (a context manager)."""

    def __init__(self, exe=None, width=1280, height=900):
        self.exe = exe or find_chromium()
        self.width, self.height = width, height
        self.proc = None
        self.buf = b""
        self.next_id = 0
        self.events = []

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self):
        self.profile = tempfile.mkdtemp(prefix="xprobe-chromium-")
        cmd_r, cmd_w = os.pipe()  # we write, Chromium reads on fd 3
        out_r, out_w = os.pipe()  # Chromium writes on fd 4, we read

        def child():
            # dup first: a pipe end may itself be fd 3 or 4
            a, b = os.dup(cmd_r), os.dup(out_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [self.exe, *FLAGS, "--user-data-dir=" + self.profile, "--remote-debugging-pipe",
             "--window-size=%d,%d" % (self.width, self.height), "about:blank"],
            preexec_fn=child, close_fds=False, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=self.stderr)
        os.close(cmd_r)
        os.close(out_w)
        self.wfd, self.rfd = cmd_w, out_r

    def close(self):
        if self.proc:
            try:
                self.send("Browser.close")
            except OSError:
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
            os.close(self.wfd)
            os.close(self.rfd)
            self.stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)

    def _diag(self):
        self.stderr.seek(0)
        return self.stderr.read()[-3000:].decode(errors="replace")

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.wfd, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def recv(self, timeout):
        deadline = time.monotonic() + timeout
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.rfd], [], [], left)[0]:
                raise BrowserError("no answer from Chromium in %ss; stderr:\n%s" % (timeout, self._diag()))
            data = os.read(self.rfd, 1 << 20)
            if not data:
                raise BrowserError("Chromium closed the pipe; stderr:\n%s" % self._diag())
            self.buf += data
        msg, _, self.buf = self.buf.partition(b"\0")
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        mid = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            m = self.recv(max(0.01, deadline - time.monotonic()))
            if m.get("id") == mid:
                if "error" in m:
                    raise BrowserError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            self.events.append(m)

    def load(self, path, timeout=60):
        """Open @path (a file) in a new tab and wait for its load event:
        a Page with what it logged so far."""
        url = "file://" + os.path.abspath(path)
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session, url)
        for method in ("Page.enable", "Runtime.enable", "Log.enable", "Network.enable"):
            self.call(method, session=session)
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False},
                  session)
        self.events = []
        t0 = time.monotonic()
        self.send("Page.navigate", {"url": url}, session)
        deadline = t0 + timeout
        loaded = False
        while not loaded:
            m = self.recv(max(0.01, deadline - time.monotonic()))
            self.events.append(m)
            if m.get("sessionId") == session and m.get("method") == "Page.loadEventFired":
                page.load_s = time.monotonic() - t0
                loaded = True
        self.collect(page)
        return page

    def collect(self, page):
        """Move what the page logged from the event queue into @page."""
        for m in self.events:
            if m.get("sessionId") != page.session:
                continue
            meth, p = m.get("method"), m.get("params", {})
            if meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                page.errors.append("console.%s: %s" % (p["type"], " ".join(
                    str(a.get("value", a.get("description"))) for a in p.get("args", []))))
            elif meth == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                page.errors.append("exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description")))
            elif meth == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                page.errors.append("log: %s" % p["entry"].get("text"))
            elif meth == "Network.requestWillBeSent":
                u = p.get("request", {}).get("url", "")
                if u != page.url:
                    page.requests.append(u)
        self.events = []
