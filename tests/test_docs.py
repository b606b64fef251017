"""Every Markdown link from README.md and docs/ to a repository file or a heading points at something that exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`[^`\n]*`")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


def markdown_files(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def prose(text: str) -> str:
    """The text outside code blocks and inline code, where a link is a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: link targets kept as their text, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings, with GitHub's -1, -2 suffixes for repeated ones."""
    seen: dict[str, int] = {}
    result = set()
    for heading in HEADING.findall(FENCE.sub("", path.read_text(encoding="utf-8"))):
        base = slug(heading)
        count = seen.get(base, 0)
        result.add(base if count == 0 else f"{base}-{count}")
        seen[base] = count + 1
    return result


def broken_links(path: Path, root: Path) -> list[str]:
    """``file: target (reason)`` for each relative link of ``path`` that leads nowhere."""
    broken = []
    for target in LINK.findall(prose(path.read_text(encoding="utf-8"))):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)}: {target}"
        if not linked.exists():
            broken.append(f"{where} (no such file)")
        elif root not in linked.parents and linked != root:
            broken.append(f"{where} (outside the repository)")
        elif anchor and (linked.suffix != ".md" or anchor not in anchors(linked)):
            broken.append(f"{where} (no heading with that anchor)")
    return broken


def test_every_relative_link_resolves() -> None:
    broken = [line for path in markdown_files(ROOT) for line in broken_links(path, ROOT)]
    assert broken == []


def test_the_docs_have_links_to_check() -> None:
    """The link check reads what the README links to (a parser that finds nothing would pass vacuously)."""
    targets = LINK.findall(prose((ROOT / "README.md").read_text(encoding="utf-8")))
    assert "docs/architecture.md" in targets and any("#" in target for target in targets)


@pytest.mark.parametrize(
    ("link", "reason"),
    [
        ("[gone](docs/missing.md)", "no such file"),
        ("[gone](#no-such-heading)", "no heading with that anchor"),
        ("[gone](docs/guide.md#nowhere)", "no heading with that anchor"),
        ("![gone](docs/missing.png)", "no such file"),
    ],
)
def test_a_broken_link_is_reported(tmp_path: Path, link: str, reason: str) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## Speed (`tools/bench.py --runs 3`)\n", encoding="utf-8")
    readme = tmp_path / "README.md"
    readme.write_text(f"# Title\n\nSee {link}, [ok](docs/guide.md#speed-toolsbenchpy---runs-3) and `[code](x.md)`.\n",
                      encoding="utf-8")  # fmt: skip
    assert broken_links(readme, tmp_path) == [f"README.md: {link.split('(')[1][:-1]} ({reason})"]


def test_docs_name_no_path_of_a_development_machine() -> None:
    """Commands in the README and docs/ use the repository's own paths (``runs/``, ``../shared/``), never a machine's."""
    found = [f"{path.relative_to(ROOT)}: {match}" for path in markdown_files(ROOT)
             for match in re.findall(r"(?<![\w.])/(?:work|tmp|root|home)/\S*", path.read_text(encoding="utf-8"))]  # fmt: skip
    assert found == []


def test_the_results_tables_are_generated_from_the_results_file() -> None:
    """README.md and docs/results.md show exactly what docs/results.json holds (``tools/results.py render``)."""
    spec = importlib.util.spec_from_file_location("results", ROOT / "tools" / "results.py")
    results = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(results)
    recorded = results.load()
    assert recorded["measurements"], "docs/results.json records no measurement"
    for path, which in results.TABLES.items():
        text = path.read_text(encoding="utf-8")
        assert results.render_into(text, results.render(recorded, which), path) == text, (
            f"{path.name}: its results table differs from docs/results.json; run tools/results.py render"
        )
