"""thunder.data.recipe: one training recipe that the data modules build, checkpoints keep and evaluation reads."""

from __future__ import annotations

from pathlib import Path

import lightning
import pytest
import torch
from lightning.pytorch import LightningDataModule

from thunder.commands.evaluate import RecipeOptions
from thunder.data import DEMO_CORPUS, DeIdDataModule, MLMDataModule, Recipe
from thunder.evaluation.gold import load_documents
from thunder.model.loader import Artefact
from thunder.synthesis.mentions import DEMO_MENTIONS

NAMES = {"내국인이름": {"class_path": "thunder.synthesis.names.PersonNames", "init_args": {"any_syllable": 0.2}}}


@pytest.mark.parametrize("seed", [0, 2])
def test_evaluate_fills_the_test_documents_as_thunder_test_does(seed: int) -> None:
    """``thunder evaluate --seed S`` and the data module's test sets (seen and unseen) read the same documents, and so
    does a recipe read back from the checkpoint state."""
    module = DeIdDataModule(seed=seed, mention_holdout=0.2, random_mentions=0.3, head_nouns="corpus", generators=NAMES,
                            max_length=64, stride=16)  # fmt: skip
    module.setup("test")
    stored = Recipe.from_dict(module.state_dict()["recipe"])
    assert stored.replace(root=None) == module.recipe
    for dataset, mentions in (("test", "seen"), ("test_unseen", "unseen")):
        test_set = module.datasets[dataset]
        filled = [test_set.synthesize(index) for index in range(len(test_set))]
        assert filled and any(document.spans for document in filled)
        for recipe in (module.recipe, stored):
            assert list(load_documents(recipe, module.taxonomy, split="test", mentions=mentions)) == filled
    other_seed = list(load_documents(module.recipe.replace(seed=seed + 1), module.taxonomy, split="test"))
    assert [d.text for d in other_seed] != [module.datasets["test"].synthesize(i).text for i in range(len(other_seed))]


def test_both_data_modules_build_their_recipe_from_their_arguments() -> None:
    module = DeIdDataModule(mention_dirs=[str(DEMO_MENTIONS)], split=(0.7, 0.2, 0.1), split_seed=4, mention_holdout=0.1)
    assert module.recipe == Recipe(mention_dirs=(str(DEMO_MENTIONS),), split=(0.7, 0.2, 0.1), split_seed=4,
                                   mention_holdout=0.1)  # fmt: skip
    assert MLMDataModule(seed=5, split_seed=4).recipe == Recipe(seed=5, split_seed=4)
    with pytest.raises(ValueError, match="split must be three"):
        Recipe(split=(0.5, 0.5, 0.5))
    with pytest.raises(ValueError, match="head_nouns must be one of"):
        Recipe.from_dict({"head_nouns": "outside", "batch_size": 8})


def test_a_checkpoint_naming_thunder_data_DeIdDataModule_still_loads(tmp_path: Path) -> None:
    """Checkpoints written before ``thunder.data`` became a package name the data module by its old path and keep
    its state under the class name."""
    saved = DeIdDataModule(seed=3, mention_holdout=0.1)
    checkpoint = {
        "pytorch-lightning_version": lightning.__version__,
        "datamodule_hyper_parameters": {"_class_path": "thunder.data.DeIdDataModule", "seed": 3, "mention_holdout": 0.1,
                                        "_instantiator": "lightning.pytorch.cli.instantiate_module"},
        "DeIdDataModule": saved.state_dict(),
    }  # fmt: skip
    torch.save(checkpoint, tmp_path / "old.ckpt")
    loaded = LightningDataModule.load_from_checkpoint(tmp_path / "old.ckpt")
    assert isinstance(loaded, DeIdDataModule) and loaded.recipe == saved.recipe
    assert Recipe.from_dict(Artefact.open(tmp_path / "old.ckpt").recipe()) == saved.recipe.replace(root=str(Path.cwd()))
    del checkpoint["DeIdDataModule"]["recipe"]  # written before recipes were stored
    torch.save(checkpoint, tmp_path / "older.ckpt")
    assert Artefact.open(tmp_path / "older.ckpt").recipe() is None


def _training_run(root: Path) -> Path:
    """A checkpoint of a run trained in ``root`` with relative corpus and mention paths."""
    root.mkdir()
    (root / "lists").symlink_to(DEMO_MENTIONS, target_is_directory=True)
    (root / "corpus").symlink_to(DEMO_CORPUS, target_is_directory=True)
    recipe = Recipe(data_dir="corpus", mention_dirs=("lists",), mention_holdout=0.1, seed=1, taxonomy="gone.yaml",
                    root=str(root))  # the taxonomy travels with the model: its file is not needed
    (root / "runs").mkdir()
    torch.save({"DeIdDataModule": {"recipe": recipe.to_dict()}}, root / "runs" / "last.ckpt")
    return root / "runs" / "last.ckpt"


def test_stored_relative_paths_resolve_where_training_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checkpoint = _training_run(tmp_path / "train")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    recipe, source = RecipeOptions().recipe(str(checkpoint))
    assert source == str(checkpoint)
    assert (recipe.data_dir, recipe.mention_dirs) == (str(tmp_path / "train" / "corpus"), (str(tmp_path / "train" / "lists"),))
    assert (recipe.mention_holdout, recipe.seed, recipe.taxonomy) == (0.1, 1, None)
    # explicit options replace the stored settings, relative to the current directory, and are not looked for there
    overridden, _ = RecipeOptions(data="mine", seed=7, mention_holdout=0.2).recipe(str(checkpoint))
    assert (overridden.data_dir, overridden.seed, overridden.mention_holdout) == ("mine", 7, 0.2)
    assert overridden.mention_dirs == recipe.mention_dirs
    # a run moved with its corpus: found above the checkpoint
    moved = tmp_path / "moved"
    (tmp_path / "train").rename(moved)
    relocated, _ = RecipeOptions().recipe(str(moved / "runs" / "last.ckpt"))
    assert relocated.data_dir == str(moved / "corpus")
    (moved / "lists").unlink()
    with pytest.raises(FileNotFoundError, match=r"recipe of .*last\.ckpt: mention_dirs lists not found \(looked in"):
        RecipeOptions().recipe(str(moved / "runs" / "last.ckpt"))


def test_a_config_gives_its_data_init_args_as_the_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "corpus").symlink_to(DEMO_CORPUS, target_is_directory=True)
    config = tmp_path / "run.yaml"
    config.write_text("data:\n  class_path: thunder.data.DeIdDataModule\n  init_args:\n    data_dir: corpus\n"
                      "    mention_holdout: 0.1\n    batch_size: 4\n    head_nouns: corpus\n", encoding="utf-8")  # fmt: skip
    monkeypatch.chdir(tmp_path)
    recipe, source = RecipeOptions(config=str(config), head_nouns="inside").recipe(None)
    assert source == str(config) and recipe.data_dir == str(tmp_path / "corpus")
    assert (recipe.mention_holdout, recipe.head_nouns) == (0.1, "inside")
    default, source = RecipeOptions().recipe(None)
    assert default == Recipe() and "packaged demo" in source
    config.write_text("model: {}\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no `data:` section"):
        RecipeOptions(config=str(config)).recipe(None)
