"""`.env.example` and `docs/configuration.md` are what `python -m dev.settings_docs` makes of infra/settings.py."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from pydantic import SecretStr

import dev.settings_docs as settings_docs
from infra.settings import Settings, load_settings

REPO_ROOT = Path(__file__).resolve().parents[2]
REGENERATE = "run `.venv/bin/python -m dev.settings_docs` to regenerate it"
PREFIXES = tuple(settings_docs.prefix_of(section) for section in settings_docs.sections())


def _all_fields() -> list[tuple[str, type, str]]:
    return [(variable, section, name)
            for section in settings_docs.sections()
            for (variable, _), name in zip(settings_docs.fields(section), section.model_fields, strict=True)]


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    for key in list(os.environ):
        if key.startswith(PREFIXES):
            monkeypatch.delenv(key)
    monkeypatch.setenv("ANCHORGPU_CACHE_DIR", str(tmp_path / "cache"))  # the router cache's computed default
    monkeypatch.chdir(tmp_path)  # no stray .env
    return tmp_path


@pytest.mark.parametrize("path", [settings_docs.ENV_EXAMPLE, settings_docs.CONFIGURATION_MD],
                         ids=lambda p: p.name)
def test_the_committed_file_is_what_the_settings_generate(path: Path) -> None:
    expected = settings_docs.generated()[path]
    current = path.read_text(encoding="utf-8") if path.exists() else ""
    assert current == expected, f"{path.relative_to(REPO_ROOT)} is stale: {REGENERATE}"


def test_every_section_of_the_settings_is_documented() -> None:
    assert [s for s in settings_docs.sections()] == [f.annotation for f in Settings.model_fields.values()]
    assert len(settings_docs.sections()) == len(Settings.model_fields) >= 8


def test_every_setting_has_a_description_and_is_in_both_files() -> None:
    env_lines = settings_docs.ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
    markdown = settings_docs.CONFIGURATION_MD.read_text(encoding="utf-8")
    fields = _all_fields()
    assert len(fields) >= 40
    for variable, section, name in fields:
        description = section.model_fields[name].description
        assert description and len(description) > 10, f"{variable} needs a description= in infra/settings.py"
        assert any(line.startswith((f"{variable}=", f"# {variable}=")) for line in env_lines), \
            f"{variable} is not in .env.example"
        assert f"| `{variable}` |" in markdown, variable
        assert description.split(".")[0] in markdown, f"{variable}: its description is not on the page"


def test_secrets_are_empty_in_env_example() -> None:
    lines = settings_docs.ENV_EXAMPLE.read_text(encoding="utf-8").splitlines()
    secrets = [variable for variable, section, name in _all_fields()
               if "SecretStr" in str(section.model_fields[name].annotation)]
    assert {"TELEGRAM_BOT_TOKEN", "TELEGRAM_WEBHOOK_SECRET", "LLM_API_KEY", "FEEDBACK_USER_SALT"} <= set(secrets)
    for variable in secrets:
        assert f"{variable}=" in lines, f"{variable} must be present and empty"


def test_env_example_loads_and_gives_the_defaults(clean_env: Path) -> None:
    defaults = load_settings()
    shutil.copy(settings_docs.ENV_EXAMPLE, clean_env / ".env")
    from_example = load_settings()
    assert from_example == defaults
    # the file is really read: a changed value there changes the settings
    text = (clean_env / ".env").read_text(encoding="utf-8").replace("RAG_TOP_K=4", "RAG_TOP_K=7")
    (clean_env / ".env").write_text(text, encoding="utf-8")
    assert load_settings().rag.top_k == 7


def test_computed_defaults_are_described_not_spelt_out() -> None:
    text = settings_docs.ENV_EXAMPLE.read_text(encoding="utf-8") + settings_docs.CONFIGURATION_MD.read_text("utf-8")
    assert str(REPO_ROOT) not in text  # no path of this checkout leaks into the generated files
    assert "# LLM_MODEL_PATH=" in text and "$ANCHORGPU_STATE_DIR/models/" in text


def test_env_value_spells_what_the_settings_parse() -> None:
    assert settings_docs.env_value(True) == "true"
    assert settings_docs.env_value(30.0) == "30"
    assert settings_docs.env_value(0.2) == "0.2"
    assert settings_docs.env_value([]) == "[]"
    assert settings_docs.env_value(None) == ""
    assert settings_docs.env_value("a b") == '"a b"'
    with pytest.raises(ValueError):
        settings_docs.env_value(SecretStr("x"))
    with pytest.raises(TypeError):
        settings_docs.env_value(Path("/x"))


@pytest.fixture
def generated_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(settings_docs, "REPO_ROOT", tmp_path)
    monkeypatch.setattr(settings_docs, "ENV_EXAMPLE", tmp_path / ".env.example")
    monkeypatch.setattr(settings_docs, "CONFIGURATION_MD", tmp_path / "docs" / "configuration.md")
    return tmp_path


def test_main_writes_then_check_passes(generated_copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert settings_docs.main([]) == 0
    assert (generated_copy / ".env.example").read_text(encoding="utf-8") == settings_docs.render_env_example()
    assert (generated_copy / "docs" / "configuration.md").exists()
    assert settings_docs.main(["--check"]) == 0
    assert "up to date" in capsys.readouterr().out


def test_check_fails_on_a_stale_file_and_says_how_to_fix_it(generated_copy: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    settings_docs.main([])
    target = generated_copy / "docs" / "configuration.md"
    target.write_text(target.read_text(encoding="utf-8").replace("`20`", "`25`"), encoding="utf-8")
    before = target.read_text(encoding="utf-8")
    assert settings_docs.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "python -m dev.settings_docs" in err and "-| `TELEGRAM_RATE_LIMIT_PER_MINUTE` | `25`" in err
    assert target.read_text(encoding="utf-8") == before  # --check writes nothing


def test_a_field_without_description_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    section = settings_docs.sections()[0]
    field = next(iter(section.model_fields.values()))
    monkeypatch.setattr(field, "description", None)
    with pytest.raises(ValueError, match="has no description"):
        settings_docs.render_configuration_md()
    assert settings_docs.main(["--check"]) == 2
