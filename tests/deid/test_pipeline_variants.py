"""tools/pipeline_variants.py: a variant takes pipeline and policy options around the loaded model, at its windows and
operating point."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from helpers import NAME, KeywordModel

from thunder.deid.pipeline import Deidentifier, PipelineOptions
from thunder.deid.policy import PublicationPolicy
from thunder.identifiers.base import ScoredSpan
from thunder.model.decoding import OperatingPoint

TOOLS = Path(__file__).resolve().parents[2] / "tools"
sys.path.insert(0, str(TOOLS))  # the tools import their shared helpers as scripts do
_SPEC = importlib.util.spec_from_file_location("pipeline_variants", TOOLS / "pipeline_variants.py")
assert _SPEC is not None and _SPEC.loader is not None
tool = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(tool)


def test_a_variant_keeps_the_loaded_model_and_takes_its_options(tokenizer, label_set) -> None:
    model = KeywordModel(tokenizer.vocab_size, len(label_set), set(), label_set.inside_id(NAME))
    loaded = Deidentifier(model, tokenizer, label_set, max_length=64, stride=16, operating_point=OperatingPoint(0.4, 0.2))
    options = PipelineOptions(recognizers=[], operator="tag", grow_threshold="off")
    variant = tool.build(options, PublicationPolicy(propagate_share=0.5, keep_regions=False), loaded)
    assert variant.model is loaded.model and variant.runtime is loaded.runtime
    assert (variant.windowing.max_length, variant.windowing.stride) == (64, 16)
    assert variant.operating_point == OperatingPoint(0.4, None)  # the loaded threshold, growing off as given
    assert variant.policy.propagate_share == 0.5 and not variant.policy.keep_regions and not variant.recognizers
    assert variant.apply("피고인 홍길동", [ScoredSpan(4, 7, NAME, 0.9, "model")]).text == f"피고인 [{NAME}]"
