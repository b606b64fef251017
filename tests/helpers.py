"""Shared test helpers (fakes, tiny models, batches): imported by test modules as ``from helpers import ...``
(``tests/`` is on the path: its conftest.py is there); fixtures live in the conftest.py files."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import torch
from lightning.pytorch import LightningDataModule, Trainer
from torch.utils.data import DataLoader

from thunder.deid.operators import entity_key
from thunder.deid.overlaps import _key_pattern, find_keys, marked_shares
from thunder.deid.pipeline import Deidentifier, DeidResult
from thunder.identifiers.base import ScoredSpan
from thunder.language.morphemes import inside_word
from thunder.language.particles import fix_particle
from thunder.language.tokenizer import ThunderTokenizer
from thunder.taxonomy import LabelSet, Taxonomy

NAME = "내국인이름"
FILLER = "피고인은 2021. 3. 4. 14:30경 서울 시내에서 피해자에게 1,000,000원을 빌려 달라고 말하였다.\n"


_DEFAULTS = Deidentifier(recognizers=[])


def spans_of(text: str, *words: str, label: str = NAME, source: str = "model") -> list[ScoredSpan]:
    """A span for every occurrence of each word (a stand-in for the model)."""
    return [
        ScoredSpan(m.start(), m.end(), label, 0.9, source) for word in words for m in re.finditer(re.escape(word), text)
    ]


def first_span(text: str, word: str, label: str = NAME) -> ScoredSpan:
    start = text.index(word)
    return ScoredSpan(start, start + len(word), label, 0.9, "model")


def check_invariants(
    text: str,
    result: DeidResult,
    given_spans: list[ScoredSpan] = (),
    deid: Deidentifier | None = None,
    scores: list[float] | None = None,
) -> None:
    """Placeholder-operator invariants: characters outside replaced spans kept (a particle right after a
    replacement may be corrected), no text left of a detection that spreads (``deid.policy.spreads``, default options)
    except inside a longer word or, for a model span, where the model's ``scores`` give no evidence
    (``deid.policy.spreads_to``), one placeholder per entity, input spans covered."""
    deid = deid or _DEFAULTS
    spans = sorted(result.spans, key=lambda s: s.start)
    position, previous_end, previous = 0, 0, None
    out = result.text
    for span in spans:
        assert span.text == text[span.start : span.end]
        assert previous_end <= span.start
        gap = text[previous_end : span.start]
        options = {gap} if previous is None else {gap, fix_particle(previous, gap)}
        matched = [g for g in options if out.startswith(g, position)]
        assert matched, (gap, out[position:])
        position += len(matched[0])
        replacement = next(r for r in (span.placeholder, "*" * len(span.placeholder)) if out.startswith(r, position))
        position += len(replacement)
        previous_end, previous = span.end, replacement
    tail = text[previous_end:]
    assert out[position:] in ({tail} if previous is None else {tail, fix_particle(previous, tail)})
    detected = {span: entity_key(span.text) for span in spans if span.source != "propagated"}
    shares = marked_shares(text, list(detected), find_keys(text, set(detected.values())), None)  # at most the pipeline's
    spreading = {key: span for span, key in detected.items() if deid.policy.spreads(key, span, shares.get(key, 1.0))}
    evidenced = {key for key, span in spreading.items() if span.source != "model" or scores is None
                 or all(deid.policy.spreads_to(key, max(scores[m.start() : m.end()]))
                        for m in _key_pattern(key).finditer(text))}  # fmt: skip
    for key in evidenced:
        if len(key) >= 2:  # left only inside a longer word (신호 in 신호등)
            assert all(inside_word(out, m.start(), m.end()) for m in _key_pattern(key).finditer(out)), (key, out)
    letters: dict[str, str] = {}
    for span in spans:
        assert letters.setdefault(entity_key(span.text), span.placeholder) == span.placeholder
    assert len(set(letters.values())) == len(letters)
    for given_span in given_spans:
        core = text[given_span.start : given_span.end]
        if re.search(r"\w", core) and core.strip("_"):
            start = given_span.start + len(core) - len(core.lstrip())
            end = given_span.end - (len(core) - len(core.rstrip()))
            assert any(s.start <= start and end <= s.end for s in spans) or any(
                s.start < end and start < s.end for s in spans
            ), (core, spans)


class KeywordModel(torch.nn.Module):
    """A context-free fake token classifier: the given token ids are tagged ``I-<label>``, all others ``O``."""

    def __init__(self, vocab_size: int, num_labels: int, positive: set[int], tag: int) -> None:
        super().__init__()
        self.table = torch.nn.Embedding(vocab_size, num_labels)
        with torch.no_grad():
            self.table.weight.zero_()
            self.table.weight[:, 0] = 10.0
            for token in positive:
                self.table.weight[token, tag] = 20.0

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.table(input_ids)


def small_tokenizer() -> ThunderTokenizer:
    """A tokenizer of the pipeline tests' texts (not the shared demo one): their names are cut as they rely on."""
    texts = [FILLER, "피고인 홍길동은 피해자 김철수에게 전화하였다.", "주민등록번호 900101-1234568"] * 4
    return ThunderTokenizer.train(texts, vocab_size=400, min_frequency=1)


def build_tiny_model(tokenizer, label_set: LabelSet):
    """A randomly initialised one-layer DeBERTa-v2 token classifier for ``tokenizer`` and ``label_set``."""
    from transformers import AutoModelForTokenClassification

    from thunder.model.backbones import apply_tokenizer, backbone_config

    torch.manual_seed(0)
    config = backbone_config("tiny", {"hidden_size": 32, "num_attention_heads": 2, "intermediate_size": 64,
                                      "num_hidden_layers": 1, "num_labels": len(label_set),
                                      "id2label": dict(enumerate(label_set.names))})  # fmt: skip
    apply_tokenizer(config, tokenizer)
    return AutoModelForTokenClassification.from_config(config).eval()


def write_tiny_export(path: Path) -> Path:
    """A Thunder export directory (model, tokenizer, thunder.json) of a random tiny model, built in seconds."""
    from thunder.model.export import write_export

    tokenizer = small_tokenizer()
    label_set = LabelSet(Taxonomy.load(), "label", "IO")
    return write_export(path, build_tiny_model(tokenizer, label_set), tokenizer, label_set, "token-classification")


def write_keys(directory: Path, name: str = "signing", curve=None) -> tuple[Path, Path]:
    """A new elliptic-curve key pair (P-256 unless ``curve``) as PEM files, for ``thunder export --sign`` and
    ``--verify``: (private key, public key)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(curve or ec.SECP256R1())
    private, public = directory / f"{name}.pem", directory / f"{name}.pub"
    private.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                          serialization.NoEncryption()))  # fmt: skip
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))  # fmt: skip
    return private, public


# ----------------------------------------------------------------------------------------------- training batches

TEXTS = [
    "피고인은 2021. 3. 4. 서울 강남구 테헤란로에서 피해자 홍길동에게 전화하여 돈을 빌려 달라고 말하였다.",
    "피해자 김철수는 경찰에서 피고인으로부터 폭행을 당하였다고 진술하였다.",
    "피고인은 주식회사 한빛의 대표이사로서 계좌로 3,000,000원을 송금받았다.",
] * 4

def token_batch(tokenizer: ThunderTokenizer, label_set: LabelSet, seed: int = 0) -> dict[str, torch.Tensor]:
    """Two windows of real text with pseudo-random tags (padding and specials ignored)."""
    encoded = tokenizer.pad([[tokenizer.cls_token_id, *e.ids[:30], tokenizer.sep_token_id]
                             for e in tokenizer.encode_batch(TEXTS[:2])])
    generator = torch.Generator().manual_seed(seed)
    labels = torch.randint(0, len(label_set), encoded["input_ids"].shape, generator=generator)
    labels[encoded["attention_mask"] == 0] = -100
    labels[:, 0] = -100
    return {**encoded, "labels": labels}


def mlm_batch(tokenizer: ThunderTokenizer) -> dict[str, torch.Tensor]:
    batch = token_batch(tokenizer, LabelSet(Taxonomy.load(None), "binary"))
    labels = torch.full_like(batch["input_ids"], -100)
    masked = torch.zeros_like(labels, dtype=torch.bool)
    masked[:, 2::5] = True
    masked &= batch["attention_mask"].bool()
    labels[masked] = batch["input_ids"][masked]
    batch["input_ids"] = batch["input_ids"].masked_fill(masked, tokenizer.mask_token_id)
    return {**batch, "labels": labels}


class RepeatedBatch(LightningDataModule):
    """The same batch over and over, with the attributes of Thunder's data modules."""

    def __init__(self, batch: dict, tokenizer: ThunderTokenizer, label_set: LabelSet | None = None, n: int = 8):
        super().__init__()
        self.batch, self.tokenizer, self.label_set, self.n = batch, tokenizer, label_set, n

    def train_dataloader(self) -> DataLoader:
        return DataLoader([self.batch] * self.n, batch_size=None)

    def val_dataloader(self) -> DataLoader:
        return DataLoader([self.batch], batch_size=None)

    test_dataloader = val_dataloader


def trainer(tmp_path: Path, steps: int, **kwargs) -> Trainer:
    options = dict(accelerator="cpu", devices=1, max_steps=steps, logger=False, enable_checkpointing=False,
                   enable_progress_bar=False, enable_model_summary=False, num_sanity_val_steps=0,
                   limit_val_batches=0, default_root_dir=tmp_path)
    options.update(kwargs)
    return Trainer(**options)


# ----------------------------------------------------------------------------------------------- the SNU release

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "snu-thunder-deid-release"
TOKENIZER_32K = REFERENCE / "tokenizer" / "mecab_bpe_deid_32k"


def need(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} not found (the SNU Thunder-DeID release reference / corpus beside the clone)")
    return path


def release_tags() -> list[str]:
    data = json.loads(need(REFERENCE / "idx_to_label.json").read_text(encoding="utf-8"))
    return [data[str(i)] for i in range(len(data))]


def rerecord(export: Path) -> None:
    """Record an export's fingerprint (its ONNX graph's digest included) and self-test answers again, as one who edited
    its weights, operating point, configuration or graph entry and covered their tracks would (the checks after the fingerprint must still refuse what they refuse)."""
    from transformers import AutoModelForTokenClassification

    from thunder.language.release_tokenizer import load_tokenizer
    from thunder.model import integrity
    from thunder.model.decoding import OperatingPoint
    from thunder.model.inference import TorchRuntime
    from thunder.model.loader import EXPORT_FILE

    info = json.loads((export / EXPORT_FILE).read_text(encoding="utf-8"))
    model = AutoModelForTokenClassification.from_pretrained(export).eval()
    point = OperatingPoint.from_dict(info.get("operating_point"))
    info |= integrity.record(model.state_dict(), TorchRuntime(model), load_tokenizer(export), point,
                             info["label_set"], info["tokenizer"], model.config, info.get("windows"))  # fmt: skip
    info["fingerprint"] = integrity.fingerprint(model.state_dict(), point.to_dict(), info["label_set"], info["tokenizer"],
                                                info.get("windows"), None, **integrity.covered(info, model.config))  # fmt: skip
    (export / EXPORT_FILE).write_text(json.dumps(info, ensure_ascii=False), encoding="utf-8")
