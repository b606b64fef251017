"""The review page in a real headless browser (Debian's Chromium driven by Playwright): highlights render,
accept / reject / add by selection, re-apply, downloads, a batch of files."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from thunder.deid import Deidentifier
from thunder.recognizers import ScoredSpan
from thunder.serve import create_app, running

CHROMIUM = Path("/usr/bin/chromium")
TEXT = "피고인 홍길동은 𠀀 010-1234-5678로 전화하였고, 주민등록번호 900101-1234568을 알려 주었다.\n홍길동이 자백하였다."
NAME_AT = TEXT.index("홍길동")  # code points (Python), what the page must send

pytestmark = pytest.mark.skipif(not CHROMIUM.exists(), reason=f"{CHROMIUM} not found (apt-get install chromium)")


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="the playwright package is not installed")
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM),  # never a downloaded browser
            args=["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage", "--disable-gpu",
                  "--no-first-run", "--disable-extensions"],  # fmt: skip
        )
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def service():
    with running(create_app(Deidentifier())) as (url, _):
        yield url


@pytest.fixture
def page(browser, service):
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 900})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto(service + "/")
    page.wait_for_selector("#status:has-text('ready')")
    yield page
    context.close()
    assert not errors, errors


def colour_share(png: bytes, rgb: tuple[int, int, int]) -> float:
    """Share of the pixels of a screenshot within a few levels of ``rgb``."""
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    pixels = list(image.getdata())
    near = sum(1 for p in pixels if all(abs(a - b) <= 6 for a, b in zip(p, rgb)))
    return near / len(pixels)


def test_highlights_render_and_review_round_trip(page, tmp_path: Path) -> None:
    page.fill("#input", TEXT)
    page.click("#run")
    page.wait_for_selector("#original mark.span")
    marks = page.locator("#original mark.span")
    assert marks.count() == 2
    assert marks.nth(0).inner_text() == "010-1234-5678"  # offsets in code points: the astral 𠀀 before it counts 1
    assert marks.nth(0).get_attribute("data-badge") == "A 0.90"
    assert marks.nth(1).inner_text() == "900101-1234568"
    assert page.inner_text("#output") == Deidentifier()(TEXT).text

    # the highlight is painted in its category's colour (a real screenshot, not just the DOM)
    colour = page.evaluate("getComputedStyle(document.querySelector('#original mark.span')).backgroundColor")
    rgb = tuple(int(v) for v in colour.removeprefix("rgb(").removesuffix(")").split(","))
    assert rgb != (255, 255, 255) and colour_share(marks.nth(0).screenshot(), rgb) > 0.3
    assert colour_share(page.locator("#output").screenshot(), rgb) == 0

    # reject the phone number, add the name by selecting it, re-apply
    marks.nth(1).focus()
    page.keyboard.press("Enter")  # the keyboard toggles too
    assert "rejected" in marks.nth(1).get_attribute("class")
    page.keyboard.press(" ")
    assert "rejected" not in marks.nth(1).get_attribute("class")
    marks.nth(0).click()
    assert "rejected" in marks.nth(0).get_attribute("class")
    page.evaluate(
        """([start, length]) => {
            const node = [...document.querySelector('#original').childNodes][0];  // text before the first mark
            const range = document.createRange();
            range.setStart(node, start); range.setEnd(node, start + length);
            getSelection().removeAllRanges(); getSelection().addRange(range);
        }""",
        [NAME_AT, 3],
    )
    page.select_option("#label", "내국인이름")
    page.click("#add")
    assert page.locator("#original mark.added").inner_text() == "홍길동"
    page.click("#reapply")
    page.wait_for_selector("#status:has-text('re-applied')")
    expected = Deidentifier().apply(TEXT, [
        ScoredSpan(NAME_AT, NAME_AT + 3, "내국인이름", 1.0, "reviewer"),
        ScoredSpan(TEXT.index("900101"), TEXT.index("900101") + 14, "주민등록번호", 0.95, "resident_registration_number"),
    ])  # fmt: skip
    assert page.inner_text("#output") == expected.text
    assert expected.text.startswith("피고인 A는 𠀀 010-1234-5678로") and "\nA가 자백" in expected.text
    assert page.locator("#original mark.rejected").inner_text() == "010-1234-5678"  # still shown, still rejected
    assert page.locator("#original mark.rejected").get_attribute("data-badge") == "✗ 0.90"
    if os.environ.get("THUNDER_REVIEW_SCREENSHOT"):  # docs/serving.md's picture: THUNDER_REVIEW_SCREENSHOT=docs/review-page.png
        page.locator("body").screenshot(path=os.environ["THUNDER_REVIEW_SCREENSHOT"])

    # downloads: the de-identified text, and the reviewed spans as evaluation gold
    with page.expect_download() as download:
        page.click("#download-text")
    assert Path(download.value.path()).read_text(encoding="utf-8") == expected.text
    with page.expect_download() as download:
        page.click("#download-spans")
    gold = tmp_path / "reviewed.jsonl"
    download.value.save_as(gold)
    (record,) = [json.loads(line) for line in gold.read_text(encoding="utf-8").splitlines()]
    assert record["text"] == TEXT
    assert record["spans"] == [[s.start, s.end, s.label] for s in expected.spans]
    assert record["rejected"] == [[TEXT.index("010"), TEXT.index("010") + 13, "전화번호"]]
    from thunder.evaluate import read_jsonl
    from thunder.taxonomy import Taxonomy

    (document,) = read_jsonl(gold, Taxonomy.load())
    assert [document.text[s.start : s.end] for s in document.spans] == ["홍길동", "900101-1234568", "홍길동"]


def test_a_batch_of_files(page, tmp_path: Path) -> None:
    files = []
    for i in range(3):
        files.append(tmp_path / f"판결{i}.txt")
        files[-1].write_text(f"{i}번 문서: 연락처 010-{5000 + i}-1234, 끝.", encoding="utf-8")
    (tmp_path / "bad.txt").write_bytes(b"\xff\xfe")
    page.set_input_files("#files", [str(tmp_path / "bad.txt")])
    page.click("#run")
    page.wait_for_selector("#status.error")
    assert page.inner_text("#status") == "bad.txt: not valid UTF-8"
    page.set_input_files("#files", [str(f) for f in files])
    page.click("#run")
    page.wait_for_selector("#docs button >> nth=2")
    assert page.locator("#docs button").all_inner_texts() == [f"{f.name} (1)" for f in files]
    page.click("#docs button >> nth=2")
    assert page.inner_text("#output") == "2번 문서: 연락처 A, 끝."
    assert page.locator("#original mark.span").inner_text() == "010-5002-1234"
    with page.expect_download() as download:
        page.click("#download-text")
    lines = [json.loads(line) for line in Path(download.value.path()).read_text(encoding="utf-8").splitlines()]
    assert [line["id"] for line in lines] == [f.name for f in files]
    assert lines[0]["text"] == "0번 문서: 연락처 A, 끝."
