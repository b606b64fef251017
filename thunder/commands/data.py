"""``thunder data preview``: a few synthesized training documents of a config, spans highlighted."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # Lightning and the data modules are imported where a data module is built: not for --help
    from lightning.pytorch import LightningDataModule

    from thunder.synthesis.synthesizer import SynthesizedDocument

DATA_MODULE = "thunder.data.token_classification.DeIdDataModule"  # a `data:` section without class_path

COLOURS = ("31", "32", "33", "34", "35", "36", "91", "92", "93", "94", "95", "96")


def highlight(document: SynthesizedDocument, colour: bool = True) -> str:
    """``document.text`` with every span marked: ANSI colour plus ``[text|label]`` (plain brackets without colour)."""
    parts: list[str] = []
    position = 0
    labels = sorted({span.label for span in document.spans})
    for span in sorted(document.spans, key=lambda span: span.start):
        parts.append(document.text[position : span.start])
        mention = document.text[span.start : span.end]
        if colour:
            code = COLOURS[labels.index(span.label) % len(COLOURS)]
            parts.append(f"\033[1;{code}m{mention}\033[0m\033[2;{code}m[{span.label}]\033[0m")
        else:
            parts.append(f"[{mention}|{span.label}]")
        position = span.end
    parts.append(document.text[position:])
    return "".join(parts)


def config_data_section(config: str) -> dict[str, Any]:
    """The ``data:`` section of a LightningCLI YAML config as ``{"class_path", "init_args"}``; without ``class_path``
    the section is the init arguments of :class:`DeIdDataModule`."""
    import yaml

    path = Path(config)
    if not path.is_file():
        raise FileNotFoundError(f"config file {config} not found")
    try:
        content = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as error:
        raise ValueError(f"{config}: not valid YAML ({' '.join(str(error).split())})") from None
    section = content.get("data") if isinstance(content, dict) else None
    if not section:
        raise ValueError(f"{config}: no `data:` section")
    if isinstance(section, str):  # a bare class path
        section = {"class_path": section}
    if not isinstance(section, dict):
        raise ValueError(f"{config}: `data:` is a {type(section).__name__}, not a class_path or init arguments")
    if "class_path" not in section:
        section = {"class_path": DATA_MODULE, "init_args": section}
    return section


def datamodule_from_config(config: str) -> LightningDataModule:
    """The data module of a LightningCLI YAML config (its ``data:`` section), built by jsonargparse as ``thunder fit``
    builds it: relative input paths read from the config's folder."""
    from jsonargparse import ArgumentParser
    from jsonargparse import Path as ConfigFile
    from lightning.pytorch import LightningDataModule

    parser = ArgumentParser(exit_on_error=False)
    parser.add_subclass_arguments(LightningDataModule, "data", required=True)
    section = config_data_section(config)
    with ConfigFile(config, mode="fr").relative_path_context():
        namespace = parser.parse_object({"data": section})
    return parser.instantiate_classes(namespace).data


def preview_command(
    config: str,
    n: int = 3,
    split: Literal["train", "val", "test"] = "train",
    epoch: int = 0,
    colour: bool | None = None,
) -> None:
    """Print a few synthesized documents of a training config with their entity spans highlighted.

    Args:
        config: LightningCLI YAML config whose ``data:`` section describes a DeIdDataModule.
        n: Number of documents to show.
        split: Which split to show documents from.
        epoch: Training epoch to synthesize (mentions change per epoch with ``replacement: per_epoch``).
        colour: ANSI colours, by default when printing to a terminal.
    """
    from thunder.data import DeIdDataModule

    datamodule = datamodule_from_config(config)
    if not isinstance(datamodule, DeIdDataModule):
        raise TypeError(f"{config}: preview needs a DeIdDataModule, the config builds {type(datamodule).__name__}")
    documents = datamodule.documents()[split]
    synthesizer = datamodule.synthesizer(split)
    use_colour = sys.stdout.isatty() if colour is None else colour
    if not documents:
        print(f"the {split} split is empty")
        return
    for annotated in documents[:n]:
        document = synthesizer(annotated, epoch=epoch if split == "train" else 0)
        print(f"=== {document.doc_id} ({split}, epoch {epoch}, {len(document.spans)} spans)")
        print(highlight(document, use_colour))
        for span in document.spans:
            mention = document.text[span.start : span.end]
            print(f"  {span.start:>6}-{span.end:<6} {span.label:<16} {span.entity:<4} {mention}")
        print()
