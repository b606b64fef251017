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


# ------------------------------------------------------------------------------------- one figure per fact

CURRENT = re.compile(r"\bcurrent model\b", re.IGNORECASE)  # how the docs name the model of docs/results.json
AMBIGUOUS = re.compile(r"README'?s model|model of the README|README model", re.IGNORECASE)  # names no model over time
DATE = re.compile(r"\b20\d\d-\d\d-\d\d\b")
SENTENCE = re.compile(r"(?<=[.;:])\s+(?=[A-Z*(\[])")
GENERATED = re.compile(r"<!-- results\.json:.*?<!-- /results\.json -->", re.DOTALL)
# Sections another change is rewriting; each must name its models when it lands (issue 68).
def results_module():
    spec = importlib.util.spec_from_file_location("results", ROOT / "tools" / "results.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def sections(text: str) -> list[tuple[str, str]]:
    """``(heading, body)`` of each section of a Markdown text (code, inline code and generated tables removed)."""
    parts = re.split(r"^(#{1,6}\s+.+)$", prose(GENERATED.sub("", text)), flags=re.MULTILINE)
    found = [("", parts[0])]
    found += [(heading.lstrip("#").strip(), body) for heading, body in zip(parts[1::2], parts[2::2])]
    return found


def sentences(body: str) -> list[str]:
    """The sentences of a section's paragraphs; each table row is one."""
    result = []
    for block in re.split(r"\n\s*\n", body):
        rows = [line for line in block.splitlines() if line.lstrip().startswith("|")]
        text = " ".join(line for line in block.splitlines() if not line.lstrip().startswith("|"))
        result += rows + [s for s in SENTENCE.split(text) if s.strip()]
    return result


def current_model_cells(body: str) -> list[str]:
    """The cells of every table column whose header says ``current model``."""
    cells = []
    for block in re.split(r"\n\s*\n", body):
        rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in block.splitlines()
                if line.lstrip().startswith("|")]  # fmt: skip
        if len(rows) < 3:
            continue
        columns = [i for i, header in enumerate(rows[0]) if CURRENT.search(header)]
        cells += [row[i] for row in rows[2:] for i in columns if i < len(row)]
    return cells


def unrecorded_figures(name: str, text: str, recorded: set[str]) -> list[str]:
    """``file: figure in "…"`` for each measured figure (``tools/results.py``'s ``FIGURE``) quoted for the current
    model that ``docs/results.json`` does not give. Quoted for the current model: anywhere in the README's Results
    section; elsewhere in the README in a sentence without a date and a link (a dated history names its day and
    where it is told); in docs/ in a sentence that says "current model" and in a table column headed so. A doc that
    calls a model "the README's" fails too: which model that is changes, history names its model and its date."""
    figure = results_module().FIGURE
    found = []
    for heading, body in sections(text):
        quoted = current_model_cells(body) if name != "README.md" else []
        for sentence in sentences(body):
            if AMBIGUOUS.search(sentence):
                found.append(f"{name}: names no model: {sentence.strip()[:80]!r}")
            if name == "README.md":
                history = DATE.search(sentence) and LINK.search(sentence) and heading != "Results"
                if not history:
                    quoted.append(sentence)
            elif CURRENT.search(sentence) and not sentence.lstrip().startswith("|"):
                quoted.append(sentence)
        found += [f"{name}: {value} in {q.strip()[:80]!r}" for q in quoted for value in figure.findall(q)
                  if value not in recorded]  # fmt: skip
    return found


def test_figures_quoted_for_the_current_model_are_the_recorded_ones() -> None:
    """One figure per fact: what the README and docs/ quote of the current model is what docs/results.json holds."""
    recorded = results_module().values(results_module().load())
    paths = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]  # docs/experiments/: dated history
    found = [line for path in paths
             for line in unrecorded_figures(path.name, path.read_text(encoding="utf-8"), recorded)]  # fmt: skip
    assert found == []


def test_the_recorded_figures_include_pooled_fillings() -> None:
    """The check reads figures as the docs write them (a parser that finds nothing would pass vacuously)."""
    results = results_module()
    recorded = results.values(results.load())
    gold = [m["figures"] for name, m in results.load()["measurements"].items() if name.startswith("gold-")]
    pooled = sum(f["all"][0] for f in gold), sum(f["all"][1] for f in gold)
    assert {"0.9426", "0.27%", results._pct(*pooled)} <= recorded  # the shipped model's, as the docs write them


@pytest.mark.parametrize(
    ("name", "text", "flagged"),
    [
        ("README.md", "# T\n\nThe demo trains to binary F1 0.9585 ([details](docs/results.md)).\n", ["0.9585"]),
        ("README.md", "# T\n\nOn 2026-12-02 it ran 1.65x faster ([bench](docs/b.md)).\n", []),
        ("README.md", "# T\n\n## Results\n\nOn 2026-12-02 it leaked 0.99% ([bench](docs/b.md)).\n", ["0.99%"]),
        ("README.md", "# T\n\nIt leaks 0.28% and 0.9432, e.g. 3.8M and 3% held out.\n", []),
        ("results.md", "# R\n\nThe current model leaks 0.99%. The `whole2` of 2026-12-01 leaked 1.06%.\n", ["0.99%"]),
        ("results.md", "# R\n\n| | before | current model |\n|---|---|---|\n| names | 0.99% | **0.95%** |\n",
         ["0.95%"]),
        ("serving.md", "# S\n\nWith the README's model it finds 55.2%.\n", ["names no model"]),
    ],
)
def test_a_figure_of_the_current_model_that_is_not_recorded_is_found(name: str, text: str, flagged: list[str]) -> None:
    found = unrecorded_figures(name, text, {"0.28%", "0.9432"})
    assert len(found) == len(flagged) and all(f in line for f, line in zip(flagged, found)), found
