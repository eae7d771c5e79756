"""Open built book pages in headless Chromium and report what a reader's browser does with them (issues 16 and 33).

For each page: the requests it made and which of them left the machine (anything but ``file:``/``data:``), how
many formulas MathJax typeset and how many raw ``\\(``/``\\[`` remain, any text left with a literal ``$`` or a TeX
command (``\\alpha``) outside code and typeset math, whether a Python traceback shows, which images did not load, how
many interactive (plotly) figures rendered empty and, on a page with an interactive scatter, the text of the
tooltip shown when the mouse rests on its first point. Then its layout at each width of :data:`WIDTHS`, with every
folded cell opened: the tables, figures, formulas and code wider than the text column, the boxes whose content is
cut at their own edge (a scrolled table, a clipped cell), and the figure menus drawn over their figure's title.
:func:`problems` turns a report into what a reader would see wrong (the layout at :data:`STRICT_WIDTH` included);
:func:`narrow_notes` lists what overflows on a phone-sized page, reported, not failed. ``make test`` runs this on
every page of a book built from the chapters it executes (tests/test_notebooks.py). Screenshots are written for the
pages asked, at each width. Uses Debian's ``chromium`` (installed by ``make test`` where missing) through the
DevTools protocol (tornado's websocket client, installed with Jupyter).

Usage:
    python scripts/browser_check.py _build/html/book/chapters/06_hard_pairs.html ... [--screenshots DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

#: The page widths checked: a desktop window, where nothing may overflow (:data:`STRICT_WIDTH`), and a phone.
WIDTHS: tuple[int, ...] = (1400, 420)
STRICT_WIDTH = 1400
#: Where Debian's package puts the browser (its ``chromium`` launcher script adds flags we set ourselves).
CHROMIUM_CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser", "google-chrome")
# true once MathJax has loaded and typeset the page (startup.promise resolves after the first typesetting pass)
# (a page that loads no MathJax, e.g. the search page, is ready once loaded)
MATHJAX_READY = ("location.protocol === 'file:' && document.readyState === 'complete' && "
                 "(!document.querySelector('script[src*=\"mathjax\"]') || "
                 "(window.MathJax && MathJax.startup && MathJax.startup.promise ? "
                 "MathJax.startup.promise.then(() => true) : false))")
COUNT_MATH = ("JSON.stringify({typeset: document.querySelectorAll('mjx-container').length, "
              "raw: (document.body.innerText.match(/\\\\[(\\[]/g) || []).length})")
FIRST_POINT = ("(() => { const div = document.querySelector('.plotly-graph-div'); if (!div) return null;"
               " div.scrollIntoView({block: 'center'}); const box = div.querySelector('path.point')"
               ".getBoundingClientRect(); return JSON.stringify({x: box.x + box.width / 2, y: box.y + box.height / 2});"
               " })()")
TOOLTIP = "(() => { const layer = document.querySelector('.hoverlayer'); return layer ? layer.textContent : ''; })()"
# text a reader sees with TeX left in it: a literal dollar or a TeX command (\\alpha, \\to) outside code and typeset
# math, in every text node of the page's article (folded cells included: their text is in the page)
RAW_TEX = r"""(() => {
  const root = document.querySelector('article') || document.body;
  const skip = 'mjx-container, script, style, code, pre, kbd, samp, .highlight, textarea';
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const found = [];
  while (walker.nextNode()) {
    const node = walker.currentNode;
    if (!node.parentElement || node.parentElement.closest(skip)) continue;
    const text = node.textContent, match = text.match(/\$|\\[a-zA-Z]+|\\[()[\]]/);
    if (!match) continue;  // context by code points: slicing UTF-16 units could split a surrogate pair
    const chars = Array.from(text), at = Array.from(text.slice(0, match.index)).length;
    found.push(chars.slice(Math.max(0, at - 40), at + 40).join('').replace(/\s+/g, ' '));
  }
  return JSON.stringify(found);
})()"""
# the layout at the current width, every folded cell opened (a reader may open it): elements wider than the text
# column or reaching past it, boxes that scroll or clip their own content, and figure menus over figure titles
LAYOUT = r"""(() => {
  document.querySelectorAll('details').forEach(d => { d.open = true; });
  document.querySelectorAll('.toggle-hidden').forEach(e => e.classList.remove('toggle-hidden'));
  const column = document.querySelector('article.bd-article') || document.querySelector('article') || document.body;
  const style = getComputedStyle(column), box = column.getBoundingClientRect();
  const left = box.left + parseFloat(style.paddingLeft), right = box.right - parseFloat(style.paddingRight);
  const name = e => {
    const text = Array.from((e.innerText || e.textContent || '').trim().replace(/\s+/g, ' ')).slice(0, 60).join('');
    return e.tagName.toLowerCase() + (e.className && typeof e.className === 'string' ?
      '.' + e.className.trim().split(/\s+/)[0] : '') + (text ? ' "' + text + '"' : '');
  };
  const wide = [], cut = [], menus = [];
  const shown = 'table, .plotly-graph-div, img, svg, mjx-container[display="true"], pre, code, p, li, dl';
  const chrome = 'nav, .bd-header, .bd-sidebar-primary, .bd-sidebar-secondary, .bd-footer';  // not the text
  for (const e of column.querySelectorAll(shown)) {
    if (e.closest(chrome) || (e.closest('.plotly-graph-div') && !e.matches('.plotly-graph-div'))) continue;
    if (e.matches('svg') && e.closest('mjx-container')) continue;
    const r = e.getBoundingClientRect();
    if (!r.width || !r.height) continue;
    if (r.right > right + 1 || r.left < left - 1)
      wide.push({element: name(e), width: Math.round(r.width), column: Math.round(right - left)});
  }
  for (const e of column.querySelectorAll('*')) {
    if (e.closest('.plotly-graph-div, mjx-container') || e.closest(chrome)) continue;
    const overflow = getComputedStyle(e).overflowX;
    if (overflow === 'visible' || !e.clientWidth) continue;
    // a formula's box: its typeset math, not MathJax's hidden copy for screen readers (wider, never shown)
    const typeset = e.matches('.math') ? Array.from(e.querySelectorAll('mjx-math')) : null;
    const content = typeset ? Math.max(0, ...typeset.map(m => Math.ceil(m.getBoundingClientRect().width))) :
      e.scrollWidth;
    if (content > e.clientWidth + 1) cut.push({element: name(e), content: content, visible: e.clientWidth});
  }
  for (const div of column.querySelectorAll('.plotly-graph-div')) {
    const title = div.querySelector('.g-gtitle'), menu = div.querySelector('.updatemenu-container');
    if (!title || !menu) continue;
    const a = title.getBoundingClientRect(), b = menu.getBoundingClientRect();
    if (a.width && b.width && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom)
      menus.push(name(title));
  }
  return JSON.stringify({column: Math.round(right - left), wide: wide, cut: cut, menu_over_title: menus});
})()"""
# what a reader sees wrong: a traceback in a cell's output (not a docstring's example of an error), images that did
# not load, interactive figures plotly did not draw (it adds its .main-svg layer when it does)
PAGE_STATE = ("JSON.stringify({traceback: Array.from(document.querySelectorAll('.cell_output')).some("
              "o => o.querySelector('.traceback') || o.innerText.includes('Traceback (most recent call last)')), "
              "images: document.images.length, "
              "broken_images: Array.from(document.images).filter(i => !i.complete || i.naturalWidth === 0)"
              ".map(i => i.getAttribute('src')), "
              "figures: document.querySelectorAll('.plotly-graph-div').length, "
              "empty_figures: Array.from(document.querySelectorAll('.plotly-graph-div'))"
              ".filter(d => !d.querySelector('.main-svg')).length})")


def find_chromium() -> str | None:
    """The headless browser's executable, or None when none is installed."""
    for candidate in CHROMIUM_CANDIDATES:
        found = candidate if Path(candidate).is_file() else shutil.which(candidate)
        if found:
            return found
    return None


def problems(report: dict[str, Any]) -> list[str]:
    """What a reader would see wrong on the page of ``report`` (empty when nothing).

    Example:
        >>> problems({"page": "p.html", "math": {"typeset": 3, "raw": 1}, "left_the_machine": [], "traceback": False,
        ...           "broken_images": [], "empty_figures": 0, "raw_tex": ["weight $\\\\alpha$ on"],
        ...           "layout": {"1400": {"column": 800, "wide": [{"element": "table", "width": 900, "column": 800}],
        ...                               "cut": [], "menu_over_title": []}}})  # doctest: +NORMALIZE_WHITESPACE
        ['p.html: 1 formula(s) left raw', 'p.html: TeX left in the text: weight $\\\\alpha$ on',
         "p.html at 1400 px: wider than the text column (800 px): [{'element': 'table', 'width': 900, 'column': 800}]"]
    """
    page, found = report["page"], []
    if report["math"]["raw"]:
        found.append(f"{page}: {report['math']['raw']} formula(s) left raw")
    if report.get("raw_tex"):
        found.append(f"{page}: TeX left in the text: {' | '.join(report['raw_tex'][:3])}")
    found += layout_faults(report, str(STRICT_WIDTH))
    if report["left_the_machine"]:
        found.append(f"{page}: requests left the machine: {report['left_the_machine'][:3]}")
    if report["traceback"]:
        found.append(f"{page}: a Python traceback is shown")
    if report["broken_images"]:
        found.append(f"{page}: images not loaded: {report['broken_images'][:3]}")
    if report["empty_figures"]:
        found.append(f"{page}: {report['empty_figures']} interactive figure(s) rendered empty")
    return found


def layout_faults(report: dict[str, Any], width: str) -> list[str]:
    """What :data:`LAYOUT` found on the page of ``report`` at ``width`` (a key of ``report["layout"]``), in words."""
    page, layout = report["page"], report.get("layout", {}).get(width)
    if not layout:
        return []
    found = []
    if layout["wide"]:
        found.append(f"{page} at {width} px: wider than the text column ({layout['column']} px): {layout['wide'][:3]}")
    if layout["cut"]:
        found.append(f"{page} at {width} px: content cut at a box's edge: {layout['cut'][:3]}")
    if layout["menu_over_title"]:
        found.append(f"{page} at {width} px: a figure's menu covers its title: {layout['menu_over_title'][:3]}")
    return found


def narrow_notes(report: dict[str, Any]) -> list[str]:
    """What overflows on the page of ``report`` at every width of :data:`WIDTHS` but :data:`STRICT_WIDTH` (a phone):
    reported, not counted as a problem (a wide table may scroll there)."""
    return [note for width in WIDTHS if width != STRICT_WIDTH for note in layout_faults(report, str(width))]


async def check_page(url: str, port: int, screenshot: Path | None = None,
                     widths: tuple[int, ...] = WIDTHS) -> dict[str, Any]:
    """One page in the browser listening on ``port``: requests, math, TeX left in the text, page state, tooltip at the
    first width, then the layout at every width of ``widths`` (the page loaded again at each); screenshots, one per
    width, when a path is given (``NAME.png`` at the first width, ``NAME-420.png`` at the others)."""
    from tornado.websocket import websocket_connect

    targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json"))
    connection = await websocket_connect([t for t in targets if t["type"] == "page"][0]["webSocketDebuggerUrl"],
                                         max_message_size=64 * 1024 * 1024)
    requests: list[str] = []
    counter = 0

    async def call(method: str, **params: Any) -> dict[str, Any]:
        nonlocal counter
        counter += 1
        connection.write_message(json.dumps({"id": counter, "method": method, "params": params}))
        while True:
            message = json.loads(await connection.read_message())
            if message.get("method") == "Network.requestWillBeSent":
                requests.append(message["params"]["request"]["url"])
            if message.get("id") == counter:
                return message.get("result", {})

    async def evaluate(expression: str) -> Any:
        return (await call("Runtime.evaluate", expression=expression, returnByValue=True,
                           awaitPromise=True))["result"].get("value")

    async def load(width: int) -> None:
        await call("Emulation.setDeviceMetricsOverride", width=width, height=1000, deviceScaleFactor=1,
                   mobile=width < 800)
        await call("Page.navigate", url=url)
        # MathJax typesets after load: wait for its startup promise (up to 60 s on a busy machine), then for plotly
        for _ in range(120):
            if await evaluate(MATHJAX_READY):
                break
            await asyncio.sleep(0.5)
        await asyncio.sleep(2)

    await call("Network.enable")
    await call("Page.enable")
    await load(widths[0])
    report: dict[str, Any] = {"page": url, "math": json.loads(await evaluate(COUNT_MATH)),
                              "raw_tex": json.loads(await evaluate(RAW_TEX)), **json.loads(await evaluate(PAGE_STATE))}
    point = await evaluate(FIRST_POINT)
    if point:
        where = json.loads(point)
        for step in range(5):  # plotly shows a tooltip after the pointer moves onto a point
            await call("Input.dispatchMouseEvent", type="mouseMoved", x=where["x"] - 4 + 2 * step, y=where["y"])
            await asyncio.sleep(0.15)
        await asyncio.sleep(0.8)
        report["tooltip"] = await evaluate(TOOLTIP)
    report["layout"], report["screenshots"] = {}, []
    for index, width in enumerate(widths):
        if index:
            await load(width)
        if screenshot is not None:  # as the page opens, before LAYOUT unfolds its cells
            shot = await call("Page.captureScreenshot", format="png")
            path = screenshot if not index else screenshot.with_name(f"{screenshot.stem}-{width}.png")
            path.write_bytes(base64.b64decode(shot["data"]))
            report["screenshots"].append(str(path))
        report["layout"][str(width)] = json.loads(await evaluate(LAYOUT))
    report["requests"] = len(requests)
    report["left_the_machine"] = [u for u in requests if not u.startswith(("file:", "data:", "about:"))]
    connection.close()
    return report


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def check_pages(pages: list[Path], screenshots: Path | None = None, shoot: set[str] | None = None,
                chromium: str | None = None, browsers: int = 3) -> list[dict[str, Any]]:
    """Open each page in headless Chromium and return a report per page (see :func:`check_page`), in page order.

    Screenshots of the pages whose stem is in ``shoot`` (all pages when None) go to ``screenshots``, if given. The
    pages are shared out over ``browsers`` Chromium processes checking at once: a page spends most of its time
    waiting (MathJax's start, plotly's drawing, the tooltip), so several open together take a fraction of the time.
    """
    executable = chromium or find_chromium()
    if executable is None:
        raise FileNotFoundError("no chromium found (Debian: apt install chromium)")
    if screenshots is not None:
        screenshots.mkdir(parents=True, exist_ok=True)
    groups = [pages[start::browsers] for start in range(min(browsers, len(pages)))]
    with ThreadPoolExecutor(max_workers=len(groups) or 1) as pool:
        checked = list(pool.map(lambda group: _check_in_one_browser(group, executable, screenshots, shoot), groups))
    by_page = {report["page"]: report for reports in checked for report in reports}
    return [by_page[page.resolve().as_uri()] for page in pages]


def _check_in_one_browser(pages: list[Path], executable: str, screenshots: Path | None,
                          shoot: set[str] | None) -> list[dict[str, Any]]:
    """:func:`check_page` of each of ``pages``, one after the other, in one Chromium of their own."""
    port = _free_port()
    # a profile folder of its own: Chromiums sharing the default one hand their pages to the first and exit
    profile = tempfile.mkdtemp(prefix="caplib-chromium-")
    browser = subprocess.Popen([executable, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                                f"--remote-debugging-port={port}", "about:blank"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(150):  # until the DevTools endpoint answers
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/json")
                break
            except OSError:
                time.sleep(0.2)
        reports = []
        for page in pages:
            path = page.resolve()
            shot = None if screenshots is None or (shoot is not None and path.stem not in shoot) else \
                screenshots / f"{path.stem}.png"
            reports.append(asyncio.run(check_page(path.as_uri(), port, shot)))
        return reports
    finally:
        browser.terminate()
        browser.wait(timeout=30)
        shutil.rmtree(profile, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("pages", nargs="+", help="built HTML pages")
    parser.add_argument("--screenshots", default="_build/screenshots", help="where screenshots go")
    args = parser.parse_args(argv)
    reports = check_pages([Path(page) for page in args.pages], Path(args.screenshots))
    for report in reports:
        print(json.dumps(report, ensure_ascii=False))
    notes = [note for report in reports for note in narrow_notes(report)]
    print("\n".join(["on a narrow page (reported, not failed):", *notes]) if notes else "", flush=True)
    found = [problem for report in reports for problem in problems(report)]
    print("\n".join(found) or "no problems found", flush=True)
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
