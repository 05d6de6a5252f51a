"""`fabricgen profile show NAME` prints what `profile: NAME` fills in as YAML that loads back as the same intent;
`profile list` names the profiles; docs/profiles.md is what `profile list --format markdown` prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner

from fabricgen.cli.profile import SUMMARIES, profile, register
from fabricgen.load.fabric import load
from fabricgen.models.intent import PROFILES, Intent

from conftest import ROOT

MANAGEMENT = {"vlan": 100, "subnet": "192.0.2.0/24", "gateway": "192.0.2.1"}


def run(*args: str) -> str:
    result = CliRunner().invoke(profile, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def loaded_intent(data: dict[str, Any], directory: Path) -> Intent:
    (directory / "intent.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return load(directory / "intent.yaml", ROOT / "inventory").intent


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_the_shown_classes_load_back_as_the_profile_does(name: str, tmp_path: Path) -> None:
    shown = yaml.safe_load(run("show", name))
    with_profile = loaded_intent({"fabric": "f", "profile": name, "management": MANAGEMENT}, tmp_path)
    pasted = loaded_intent({"fabric": "f", "management": MANAGEMENT, **shown}, tmp_path)
    assert pasted == with_profile.model_copy(update={"profile": None})
    # pasted under the profile (an override that changes nothing), it is the same intent too
    assert loaded_intent({"fabric": "f", "profile": name, "management": MANAGEMENT, **shown}, tmp_path) == \
        with_profile


def test_show_roce_writes_out_the_recipe_and_every_default() -> None:
    shown = yaml.safe_load(run("show", "roce"))
    assert shown["qos"]["classes"]["rdma"] == {"dscp": [26], "priority": 3, "lossless": True,
                                               "scheduling": {"dwrr": 50},
                                               "ecn": {"min": "150KB", "max": "1500KB", "probability": 100}}
    assert shown["qos"]["classes"]["cnp"]["scheduling"] == "strict"
    assert shown["rdma"] == {"class": "rdma", "cnp_class": "cnp", "dcqcn": True, "tos_ecn_bits": 0,
                             "path_mtu": 4096, "gid_index": 3}


def test_an_edited_copy_loads_with_the_edit(tmp_path: Path) -> None:
    """The point of showing it: start from the recipe, change one threshold."""
    text = run("show", "roce").replace("min: 150KB", "min: 300KB")
    intent = loaded_intent({"fabric": "f", "management": MANAGEMENT, **yaml.safe_load(text)}, tmp_path)
    ecn = intent.qos.classes["rdma"].ecn
    assert ecn is not None and (ecn.min, ecn.max) == (300_000, 1_500_000)


def test_an_unknown_profile_is_a_usage_error() -> None:
    result = CliRunner().invoke(profile, ["show", "rocev9"])
    assert result.exit_code == 2
    assert "'rocev9' is not 'roce'" in result.output  # click names the choices


def test_list_names_every_profile_with_its_summary() -> None:
    assert run("list").splitlines() == [f"{name:<8} {SUMMARIES[name]}" for name in sorted(PROFILES)]


def test_docs_profiles_md_is_in_sync() -> None:
    assert (ROOT / "docs" / "profiles.md").read_text() == run("list", "--format", "markdown"), \
        "regenerate: fabricgen profile list --format markdown > docs/profiles.md"


def test_the_docs_list_every_class_of_every_profile() -> None:
    page = (ROOT / "docs" / "profiles.md").read_text()
    for name, profile_data in PROFILES.items():
        assert f"## `{name}`" in page
        for class_name in profile_data["qos"]["classes"]:
            assert f"\n| {class_name} |" in page


def test_register_adds_the_group_to_a_cli() -> None:
    group = click.Group("fabricgen")
    register(group)
    assert CliRunner().invoke(group, ["profile", "show", "roce"]).output == run("show", "roce")
