"""Open built book pages in headless Chromium and report what a reader's browser does with them (issue 16, item 8).

For each page: the requests it made and which of them left the machine (anything but ``file:``/``data:``), how
many formulas MathJax typeset and how many raw ``\\(``/``\\[`` remain, and, on a page with an interactive figure,
the text of the tooltip shown when the mouse rests on its first point. A screenshot of each page is written.
Uses Debian's ``chromium`` through the DevTools protocol (tornado's websocket client, installed with Jupyter).

Usage:
    python scripts/browser_check.py _build/html/book/chapters/06_hard_pairs.html ... [--screenshots DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

CHROMIUM = "/usr/lib/chromium/chromium"
PORT = 9333
# true once MathJax has loaded and typeset the page (startup.promise resolves after the first typesetting pass)
MATHJAX_READY = ("window.MathJax && MathJax.startup && MathJax.startup.promise ? "
                 "MathJax.startup.promise.then(() => true) : false")
COUNT_MATH = ("JSON.stringify({typeset: document.querySelectorAll('mjx-container').length, "
              "raw: (document.body.innerText.match(/\\\\[(\\[]/g) || []).length})")
FIRST_POINT = ("(() => { const div = document.querySelector('.plotly-graph-div'); if (!div) return null;"
               " div.scrollIntoView({block: 'center'}); const box = div.querySelector('path.point')"
               ".getBoundingClientRect(); return JSON.stringify({x: box.x + box.width / 2, y: box.y + box.height / 2});"
               " })()")
TOOLTIP = "(() => { const layer = document.querySelector('.hoverlayer'); return layer ? layer.textContent : ''; })()"


async def check_page(url: str, screenshot: Path) -> dict[str, Any]:
    """One page in the running browser: requests, math, tooltip; the screenshot written."""
    from tornado.websocket import websocket_connect

    targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{PORT}/json"))
    socket = await websocket_connect([t for t in targets if t["type"] == "page"][0]["webSocketDebuggerUrl"],
                                     max_message_size=64 * 1024 * 1024)
    requests: list[str] = []
    counter = 0

    async def call(method: str, **params: Any) -> dict[str, Any]:
        nonlocal counter
        counter += 1
        socket.write_message(json.dumps({"id": counter, "method": method, "params": params}))
        while True:
            message = json.loads(await socket.read_message())
            if message.get("method") == "Network.requestWillBeSent":
                requests.append(message["params"]["request"]["url"])
            if message.get("id") == counter:
                return message.get("result", {})

    async def evaluate(expression: str) -> Any:
        return (await call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True))["result"].get("value")

    await call("Network.enable")
    await call("Page.enable")
    await call("Emulation.setDeviceMetricsOverride", width=1280, height=1000, deviceScaleFactor=1, mobile=False)
    await call("Page.navigate", url=url)
    # MathJax typesets after load: wait for its startup promise (up to 60 s on a busy machine), then for plotly
    for _ in range(120):
        if await evaluate(MATHJAX_READY):
            break
        await asyncio.sleep(0.5)
    await asyncio.sleep(2)
    report: dict[str, Any] = {"page": url, "math": json.loads(await evaluate(COUNT_MATH))}
    point = await evaluate(FIRST_POINT)
    if point:
        where = json.loads(point)
        for step in range(5):  # plotly shows a tooltip after the pointer moves onto a point
            await call("Input.dispatchMouseEvent", type="mouseMoved", x=where["x"] - 4 + 2 * step, y=where["y"])
            await asyncio.sleep(0.15)
        await asyncio.sleep(0.8)
        report["tooltip"] = await evaluate(TOOLTIP)
    shot = await call("Page.captureScreenshot", format="png")
    screenshot.write_bytes(base64.b64decode(shot["data"]))
    report["requests"] = len(requests)
    report["left_the_machine"] = [u for u in requests if not u.startswith(("file:", "data:", "about:"))]
    report["screenshot"] = str(screenshot)
    socket.close()
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("pages", nargs="+", help="built HTML pages")
    parser.add_argument("--screenshots", default="_build/screenshots", help="where screenshots go")
    args = parser.parse_args(argv)
    folder = Path(args.screenshots)
    folder.mkdir(parents=True, exist_ok=True)
    browser = subprocess.Popen([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                                f"--remote-debugging-port={PORT}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(50):  # until the DevTools endpoint answers
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{PORT}/json")
                break
            except OSError:
                time.sleep(0.2)
        for page in args.pages:
            path = Path(page).resolve()
            report = asyncio.run(check_page(path.as_uri(), folder / f"{path.stem}.png"))
            print(json.dumps(report, ensure_ascii=False))
    finally:
        browser.terminate()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
