"""scripts/browser_check.py on two small pages, one with every fault issue 33 names and one without: the checks the
book's browser test relies on find what they should, and only that (headless Chromium; skipped without it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scripts import load_script

browser = load_script("browser_check")

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body {{ margin: 0; }} article.bd-article {{ width: 600px; padding: 0 20px; }}
td, code span.pre {{ white-space: nowrap; }}</style></head><body><article class="bd-article">
<h1>A chapter</h1>{body}</article></body></html>"""
FAULTY = PAGE.format(body="""
<p>The weight $\\alpha \\le 0.45$ on D(g \\to p).</p>
<div style="overflow-x: auto"><table><tr><td>exact</td><td>equivalent</td><td>alternative_correct</td>
<td>overinclusive_valid</td><td>partial</td><td>overinclusive_invalid</td><td>invalid</td><td>contradictory</td>
</tr></table></div>
<p>Signature: <code class="literal"><span class="pre">cap|nli:builtin:offline-nli@sha256:0123456789abcdef0123456789abcdef|alpha:0.85|lam:0.3|batch:16</span></code></p>
<details><summary>Solutions</summary><p>Folded: $\\lambda$ too.</p></details>""")
CLEAN = PAGE.format(body="""
<p>The weight α ≤ 0.45 on D(g → p); <code class="literal"><span class="pre">a_short_signature</span></code>.</p>
<table><tr><td>exact</td><td>partial</td></tr></table>
<pre>$ caplib score   # a shell prompt in code is no TeX</pre>""")


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, dict]:
    if browser.find_chromium() is None:
        pytest.skip("no chromium here (Debian: apt install chromium; make test installs it)")
    folder = tmp_path_factory.mktemp("pages")
    pages = []
    for name, html in (("faulty", FAULTY), ("clean", CLEAN)):
        pages.append(folder / f"{name}.html")
        pages[-1].write_text(html, encoding="utf-8")
    return {Path(report["page"]).stem: report for report in browser.check_pages(pages)}


def test_a_page_with_tex_left_and_a_table_wider_than_its_column_fails(reports):
    found = browser.problems(reports["faulty"])
    assert any("TeX left in the text" in problem and "\\alpha" in problem for problem in found), found
    assert any("$\\lambda$" in snippet for snippet in reports["faulty"]["raw_tex"])  # inside a folded cell too
    assert any("at 1400 px: content cut at a box's edge" in problem for problem in found), found  # the table
    assert any("at 1400 px: wider than the text column" in problem and "code" in problem for problem in found)


def test_a_clean_page_passes_at_both_widths(reports):
    report = reports["clean"]
    assert browser.problems(report) == []
    assert browser.narrow_notes(report) == []
    assert set(report["layout"]) == {str(width) for width in browser.WIDTHS}


def test_what_overflows_on_a_phone_is_reported_not_failed(reports):
    notes = browser.narrow_notes(reports["faulty"])
    assert notes and all(" at 420 px: " in note for note in notes)
