"""Responsiveness of the review page on a long judgment, in headless Chromium (Debian's, driven by Playwright).

Serves a de-identifier that marks every witness name of a generated judgment (about 100,000 characters, 10,000
highlights; ``tests/service/test_review_page.py``'s ``long_judgment``), opens the page, de-identifies, then times in the
browser: the first render, a click that rejects a span (until the next frame is painted), the key that moves to
the next span, turning a page, and a re-apply. Prints milliseconds (median and worst of the repeats).

    .venv/bin/python tools/bench_review_page.py [--names 10000] [--repeats 20] [--review-dir OLD_PAGE_DIR]

``--review-dir`` serves another copy of the page (e.g. ``git show main~1:thunder/resources/review/review.js`` saved
with its HTML and CSS) to compare.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"

TIMED = """async ([selector, repeats, key]) => {  // ms from the event to the next painted frame
    const times = [];
    for (let i = 0; i < repeats; i++) {
        const started = performance.now();
        if (key) document.dispatchEvent(new KeyboardEvent('keydown', { key, bubbles: true }));
        else document.querySelectorAll(selector)[i * 7 % document.querySelectorAll(selector).length].click();
        await new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)));
        times.push(performance.now() - started);
    }
    return times;
}"""


def summary(times: list[float]) -> str:
    return f"median {statistics.median(times):8.1f} ms   worst {max(times):8.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--names", type=int, default=10_000, help="highlights in the judgment")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--review-dir", type=Path, default=None, help="serve this copy of the page instead")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT / "tests"))
    from playwright.sync_api import sync_playwright
    from test_review_page import EveryName, long_judgment

    import thunder.service.app
    from thunder.service.app import create_app, running

    if args.review_dir is not None:
        thunder.service.app.REVIEW_DIR = args.review_dir.resolve()
    text = long_judgment(args.names)
    with running(create_app(EveryName())) as (url, _), sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(url + "/")
        page.wait_for_selector("#status:has-text('ready')")
        page.eval_on_selector("#input", "(area, text) => { area.value = text; }", text)  # fill types 100k characters: too slow
        started = time.perf_counter()
        page.click("#run")
        page.wait_for_selector("#original mark.span", timeout=600_000)
        page.evaluate("() => new Promise((done) => requestAnimationFrame(() => setTimeout(done, 0)))")
        first = time.perf_counter() - started
        marks = page.locator("#original mark.span").count()
        print(f"{len(text):,} characters, {args.names:,} highlights; {marks:,} marks in the DOM")
        print(f"de-identify and first render: {first:8.2f} s (server and browser)")
        print(f"click (reject / accept):      {summary(page.evaluate(TIMED, ['#original mark.span', args.repeats, '']))}")
        if page.locator("#page-next").count():
            print(f"key n (next span):            {summary(page.evaluate(TIMED, ['', args.repeats, 'n']))}")
            print(f"next page:                    {summary(page.evaluate(TIMED, ['#page-next', 5, '']))}")
        started = time.perf_counter()
        page.click("#reapply")
        page.wait_for_selector("#status:has-text('re-applied')", timeout=600_000)
        print(f"re-apply:                     {time.perf_counter() - started:8.2f} s (server and browser)")
        browser.close()


if __name__ == "__main__":
    main()
