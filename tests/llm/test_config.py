"""Model settings from the editor (dice.llm.*), the environment and their validation."""
from __future__ import annotations

import pytest

from dice_engine.llm import ConfigError, LLMConfig, from_environment, from_settings
from dice_lsp.settings import Settings, llm_config, merge, model_active


def test_editor_settings_fill_the_config_and_the_environment_fills_gaps(monkeypatch):
    monkeypatch.setenv("DICE_LLM_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("DICE_LLM_MODEL", "from-env")
    config = from_settings({"model": "qwen", "timeout": 30, "rounds": 1, "use": "compete"})
    assert (config.base_url, config.model, config.timeout_s, config.rounds, config.use) == \
        ("http://127.0.0.1:11434/v1", "qwen", 30.0, 1, "compete")
    assert config.active


@pytest.mark.parametrize("settings,words", [
    ({"backend": "llamafile"}, "unknown model backend"),
    ({"baseUrl": "localhost:8000", "model": "m"}, "not an http(s) URL"),
    ({"baseUrl": "http://h/v1"}, "needs a model name"),
    ({"temperature": 5}, "between 0 and 2"),
    ({"timeout": "soon"}, "dice.llm.timeout: expected a float"),
    ({"trustRemoteCode": "yes"}, "dice.llm.trustRemoteCode: expected a bool"),
    ({"use": "always"}, "is not one of off, fallback, compete"),
])
def test_bad_settings_name_the_setting(settings, words, monkeypatch):
    monkeypatch.delenv("DICE_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("DICE_LLM_MODEL", raising=False)
    with pytest.raises(ConfigError) as info:
        from_settings(settings)
    assert words in str(info.value)


def test_use_off_wins_over_the_environment(monkeypatch):
    monkeypatch.setenv("DICE_LLM_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv("DICE_LLM_MODEL", "m")
    assert from_environment(LLMConfig()).active
    assert not from_settings({"use": "off"}).active


def test_the_server_merges_llm_keys_nested_or_dotted(monkeypatch):
    monkeypatch.delenv("DICE_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("DICE_LLM_MODEL", raising=False)
    assert not model_active(Settings())
    nested = merge(Settings(), {"dice": {"llm": {"baseUrl": "http://127.0.0.1:8000/v1", "model": "m"}}})
    assert model_active(nested) and llm_config(nested).model == "m"
    dotted = merge(nested, {"dice.llm.use": "off"})
    assert not model_active(dotted) and dotted.llm["baseUrl"] == "http://127.0.0.1:8000/v1"
    cleared = merge(dotted, {"llm": {"baseUrl": None}})
    assert "baseUrl" not in cleared.llm
    broken = merge(Settings(), {"llm": {"baseUrl": "ftp://x", "model": "m"}})
    assert not model_active(broken)
    with pytest.raises(ConfigError):
        llm_config(broken)
