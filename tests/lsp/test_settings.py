"""dice.* settings as clients send them (nested, dotted, wrapped in "dice", partly wrong)."""
from __future__ import annotations

from dice_lsp.settings import Settings, merge


def test_defaults_keep_gpu_runs_off():
    assert Settings().gpu_enabled is False and Settings().arch == "sm_90"


def test_nested_and_dotted_keys_both_apply():
    nested = merge(Settings(), {"dice": {"arch": "A100", "gpu": {"enabled": True}, "budget": 4,
                                         "nvccFlags": ["-lineinfo", "-O3"], "includePaths": ["inc"]}})
    dotted = merge(Settings(), {"dice.arch": "sm_80", "dice.gpu.enabled": True, "dice.budget": "4",
                                "dice.nvccFlags": "-lineinfo -O3", "dice.includePaths": ["inc"]})
    assert nested == dotted
    assert nested.arch == "sm_80" and nested.gpu_enabled and nested.budget == 4
    assert nested.nvcc_flags == ("-lineinfo", "-O3") and nested.include_paths == ("inc",)


def test_bad_values_are_ignored_and_the_rest_applies():
    s = merge(Settings(arch="sm_86"), {"arch": "sm_12", "budget": "many", "regenerateOnSave": False,
                                       "unknown": 1, "nvccPath": None})
    assert s.arch == "sm_86" and s.budget == Settings().budget and s.regenerate_on_save is False


def test_non_mapping_payloads_change_nothing():
    base = Settings(budget=7)
    assert merge(base, None) is base and merge(base, ["arch"]) is base


def test_blackwell_targets_are_honoured():
    assert merge(Settings(), {"arch": "sm_100"}).arch == "sm_100"
    assert merge(Settings(), {"arch": "RTX 5090"}).arch == "sm_120"
    assert merge(Settings(), {"dice.arch": "B200"}).arch == "sm_100"


def test_an_unknown_arch_is_reported_in_one_line_and_the_old_one_kept():
    problems: list[str] = []
    s = merge(Settings(arch="sm_80"), {"arch": "bogus", "budget": 3}, problems)
    assert s.arch == "sm_80" and s.budget == 3
    (line,) = problems
    assert "\n" not in line and "dice.arch = 'bogus'" in line and "unknown GPU or architecture" in line
    assert "keeping 'sm_80'" in line
