"""``thunder import``: a published SNU Thunder-DeID model directory as a regular Thunder export directory."""

from __future__ import annotations

from pathlib import Path

from thunder.taxonomy import Taxonomy


def import_command(
    model: str,
    out: str,
    tokenizer: str | None = None,
    labels: str | None = None,
    taxonomy: str | None = None,
    alias_files: list[str] | None = None,
    protected: list[str] | None = None,
) -> None:
    """Convert a release model (SNU_Thunder-DeID-340M / -750M / -1.5B) into a Thunder export directory.

    Args:
        model: the downloaded release directory (config.json with the 595 labels, weights, tokenizer files).
        out: new output directory, then used with ``thunder deid|evaluate --model out --allow_unverified`` or
            ``init_from: out`` (a release records no fingerprint: what is converted from it stays unverified).
        tokenizer: the release tokenizer directory, when the model directory holds none
            (``tokenizer/default_tokenizers/mecab_bpe_deid_32k`` of the release's GitHub repository; 128k for 1.5B).
        labels: the release's label file as JSON (``{"0": "IT회사", "1": "O", ...}``), when config.json has no names.
        taxonomy: the taxonomy the labels are mapped onto (default: the packaged one).
        alias_files: JSON files ``{release label: taxonomy label}`` for labels nothing else maps.
        protected: words to keep as one added token each, like the release's protected words (their embeddings
            start at the mean embedding); default none.
    """
    from thunder.model.export import check_new_directory, write_export  # torch and transformers: not for --help
    from thunder.model.loader import RELEASE_UNVERIFIED, check_fit, check_weight_files
    from thunder.model.release import load_release

    base = Taxonomy.load(taxonomy, alias_files or ())
    check_new_directory(out)
    check_weight_files(model)
    net, tok, label_set, report = load_release(model, tokenizer, labels, base, protected or ())
    check_fit(net.config, tok, None, label_set, model)
    unverified = f"{Path(model).name}: {RELEASE_UNVERIFIED}"  # the mark travels: what it converts is not verified
    path = write_export(out, net, tok, label_set, "token-classification", converted_from=report, unverified=unverified)
    rules = ", ".join(f"{count} {rule}" for rule, count in sorted(report["rules"].items()))
    print(f"converted {model} to {path}: {report['labels']} labels ({rules}); unverified, as the release is: run it "
          "with --allow_unverified")
    for tag, target in report["not_exact"].items():
        print(f"  {tag} -> {target}")
