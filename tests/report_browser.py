"""Open a Snakemake report in headless Chromium and look at it as a reader would.

Chromium is driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``: the
browser reads commands on fd 3 and writes replies on fd 4, NUL-separated JSON), so nothing
beyond the standard library and the ``chromium`` binary is needed. :class:`Browser` loads the
report, collects console errors and uncaught exceptions, evaluates JavaScript in the page
(the report is a React app: ``app``, ``results``, ``categories`` are its globals) and takes
screenshots.

As a script, for a report already built::

    python tests/report_browser.py results/report.html results/report_screenshot.png

opens the first figure with its caption and writes the screenshot; console errors are
printed and make the exit status 1.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def chromium_binary() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    """One headless Chromium with one page, driven over the DevTools pipe."""

    def __init__(self, width: int = 1400, height: int = 2000, timeout: float = 60.0):
        binary = chromium_binary()
        if binary is None:
            raise RuntimeError("no chromium binary on PATH")
        self.timeout = timeout
        self.events: list[dict] = []
        self._id = 0
        self._buffer = b""
        to_chrome_r, self._to_chrome = os.pipe()
        self._from_chrome, from_chrome_w = os.pipe()
        self._profile = tempfile.mkdtemp(prefix="report-browser-")
        # fd 3: commands to Chromium, fd 4: its replies (dup2 in the child)
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--no-first-run", "--no-default-browser-check",
             f"--user-data-dir={self._profile}", f"--window-size={width},{height}",
             "--hide-scrollbars", "--allow-file-access-from-files", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            close_fds=False, preexec_fn=self._child_fds(to_chrome_r, from_chrome_w))
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target,
                                 flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(f"{domain}.enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=width,
                  height=height, deviceScaleFactor=1, mobile=False)

    @staticmethod
    def _child_fds(read_end: int, write_end: int):
        """In the child: the pipe ends on fds 3 and 4 (inheritable; the parent's pipes are
        not, so with close_fds=False nothing else leaks into Chromium)."""

        def setup() -> None:
            import fcntl

            # via fds >= 10: the pipe ends may themselves be 3 or 4, and dup2(fd, fd) would
            # leave the close-on-exec flag set
            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (read_end, write_end)]
            os.dup2(high[0], 3)
            os.dup2(high[1], 4)

        return setup

    # ------------------------------------------------------------------------- protocol
    def _send(self, message: dict) -> None:
        os.write(self._to_chrome, json.dumps(message).encode() + b"\0")

    def _receive(self, deadline: float) -> dict:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no reply from chromium")
            ready, _, _ = select.select([self._from_chrome], [], [], left)
            if ready:
                chunk = os.read(self._from_chrome, 1 << 20)
                if not chunk:
                    raise RuntimeError("chromium closed the DevTools pipe")
                self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method: str, session: bool = False, **params) -> dict:
        """Send a command and wait for its reply (events met meanwhile are kept)."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if session:
            message["sessionId"] = self.session
        self._send(message)
        deadline = time.monotonic() + self.timeout
        while True:
            reply = self._receive(deadline)
            if reply.get("id") == self._id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_event(self, method: str, timeout: float | None = None) -> dict:
        deadline = time.monotonic() + (timeout or self.timeout)
        for event in self.events:
            if event.get("method") == method:
                return event
        while True:
            event = self._receive(deadline)
            self.events.append(event)
            if event.get("method") == method:
                return event

    def pump(self, seconds: float) -> None:
        """Collect events for a while (rendering, console messages)."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                self.events.append(self._receive(deadline))
        except TimeoutError:
            pass

    # ------------------------------------------------------------------------------ page
    def open(self, path: str | os.PathLike) -> None:
        self.call("Page.navigate", session=True, url=Path(path).resolve().as_uri())
        self.wait_event("Page.loadEventFired")
        self.pump(1.0)

    def evaluate(self, expression: str):
        """The value of a JavaScript expression in the page (promises awaited)."""
        result = self.call("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self, out: str | os.PathLike) -> Path:
        data = self.call("Page.captureScreenshot", session=True, format="png")["data"]
        out = Path(out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(data))
        return out

    def console_errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries seen so far."""
        errors = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error",
                                                                                "assert"):
                errors.append(" ".join(str(a.get("value", a.get("description", "")))
                                       for a in params.get("args", [])))
            elif method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                errors.append(details.get("exception", {}).get("description")
                              or details.get("text", "uncaught exception"))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                errors.append(params["entry"].get("text", ""))
        return errors

    def close(self) -> None:
        try:
            self._send({"id": self._id + 1, "method": "Browser.close"})
            self.proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self._profile, ignore_errors=True)

    def __enter__(self) -> Browser:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


SHOW_RESULT = """
(async () => {{
    const path = {path};
    const entry = results[path];
    const category = Object.keys(categories).find(c =>
        Object.values(categories[c]).some(list => list.includes(path)));
    const settle = () => new Promise(r => setTimeout(r, 300));
    // one step at a time: setView reads the state of the previous render
    app.showCategory(category);
    await settle();
    app.setView({{content: entry.mime_type.startsWith("image") ? "img" : "html",
                  contentPath: entry.data_uri, resultPath: path}});
    await settle();
    app.showResultInfo(path);
    await settle();
    const img = document.querySelector('#app img[src^="data:image/png"]');
    return {{category: category, image: img ? img.naturalWidth : 0,
             caption: document.body.innerText.includes("What we measured")}};
}})()
"""


def show_result(browser: Browser, path: str) -> dict:
    """Open a result as a reader would: its category, its info (caption), its content."""
    return browser.evaluate(SHOW_RESULT.format(path=json.dumps(path)))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) < 2:
        print(__doc__)
        return 2
    report, out = argv[0], argv[1]
    with Browser() as browser:
        browser.open(report)
        paths = browser.evaluate("Object.keys(results)")
        figure = next((p for p in paths if p.endswith(".png")), paths[0])
        shown = show_result(browser, argv[2] if len(argv) > 2 else figure)
        browser.screenshot(out)
        errors = browser.console_errors()
    print(f"{len(paths)} results; showed {shown}; screenshot {out}")
    for e in errors:
        print("console error:", e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
