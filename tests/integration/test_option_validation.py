"""Option values of ``wtb eval`` checked before any session (issue 24 finding 6, docs/settings.md §7.3-§7.4).

Each bad value is the command line's mistake: exit status 2 in click's usage format naming the option
(or ``error: ...`` naming the variable for a ``WTB_*`` value), nothing written. Before the fix
``--timeout nan``, ``--timeout -1`` and ``--temperature nan`` ended as infrastructure errors (exit 3),
``--timeout 0`` switched timeouts off, ``--price-input inf`` wrote ``Infinity`` into summary.json, and a
base URL with ``user:pass@`` failed every request (exit 3, "run again").
"""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from wildtoolbench.cli import app
from wildtoolbench.models import ConfigurationError
from wildtoolbench.models.providers import langchain as langchain_provider
from wildtoolbench.models.providers import openai as openai_provider
from wildtoolbench.models.settings import ModelSettings
from wildtoolbench.models.transport import base_url_problem, redacted_url

SECRET = "hunter2-secret"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("WTB_TIMEOUT", "WTB_TEMPERATURE", "WTB_BACKOFF", "WTB_RPS", "WTB_BASE_URL", "WTB_MAX_RETRY_WAIT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")


def _eval(tmp_path, *args: str):
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app, ["eval", "--model", "openai:x", "--base-url", "http://127.0.0.1:9/v1", "--out", str(out), *args]
    )
    assert not out.exists(), "nothing may be written"
    assert "Traceback" not in result.output
    return result


def _error_line(output: str) -> str:
    return " ".join(output.split("Error: ", 1)[1].split())


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--timeout", "nan", "must be a finite number > 0 and <= 1e+06, got nan"),
        ("--timeout", "-1", "must be a finite number > 0 and <= 1e+06, got -1.0"),
        ("--timeout", "0", "must be a finite number > 0 and <= 1e+06, got 0.0"),
        ("--timeout", "inf", "must be a finite number > 0 and <= 1e+06, got inf"),
        ("--timeout", "1e9", "must be a finite number > 0 and <= 1e+06, got 1000000000.0"),
        ("--temperature", "nan", "must be a finite number >= 0, got nan"),
        ("--temperature", "-0.5", "must be a finite number >= 0, got -0.5"),
        ("--price-input", "inf", "must be a finite number >= 0, got inf"),
        ("--price-output", "nan", "must be a finite number >= 0, got nan"),
        ("--backoff", "inf", "must be a finite number >= 0, got inf"),
        ("--rps", "inf", "must be a finite number >= 0, got inf"),
        ("--max-retry-wait", "nan", "must be a finite number >= 0, got nan"),
        ("--max-retry-wait", "-1", "must be a finite number >= 0, got -1.0"),
    ],
)
def test_a_bad_number_is_a_usage_error_naming_the_option(tmp_path, option, value, message):
    result = _eval(tmp_path, option, value)
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Usage: ")
    assert _error_line(result.output) == f"Invalid value for '{option}': {message}"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (
            f"http://user:{SECRET}@127.0.0.1:8000/v1",
            "must not hold a user name or password ('http://[REDACTED]@127.0.0.1:8000/v1'): give the API key in the "
            "provider's key variable (OPENAI_API_KEY for openai:) and the URL without credentials",
        ),
        ("ftp://127.0.0.1/v1", "must start with http:// or https://, got 'ftp://127.0.0.1/v1'"),
        ("127.0.0.1:8000/v1", "must start with http:// or https://, got '127.0.0.1:8000/v1'"),
        ("http:///v1", "has no host: 'http:///v1'"),
        ("http://127.0.0.1:99999/v1", "is not a valid URL (Port out of range 0-65535): 'http://127.0.0.1:99999/v1'"),
    ],
)
def test_a_bad_base_url_is_configuration_that_never_shows_the_password(tmp_path, url, message):
    for model in ("openai:x", "langchain:openai:x"):
        result = CliRunner().invoke(app, ["eval", "--model", model, "--base-url", url, "--out", str(tmp_path / "o")])
        assert result.exit_code == 2, result.output
        assert SECRET not in result.output
        assert " ".join(result.output.split()) == f"error: {model}: the base URL {message}"
        assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        (
            "WTB_TIMEOUT",
            "0",
            "error: WTB_TIMEOUT (or the context field timeout) must be a finite number > 0 and <= 1e+06, got 0.0",
        ),
        (
            "WTB_TEMPERATURE",
            "nan",
            "error: WTB_TEMPERATURE (or the context field temperature) must be a finite number >= 0, got nan",
        ),
        (
            "WTB_BASE_URL",
            f"https://me:{SECRET}@api.example.com/v1",
            "error: openai:x: the base URL must not hold a user name or password ('https://[REDACTED]@api.example.com/v1'): "
            "give the API key in the provider's key variable (OPENAI_API_KEY for openai:) and the URL without credentials",
        ),
    ],
)
def test_a_bad_setting_from_the_environment_is_a_configuration_error(tmp_path, monkeypatch, variable, value, message):
    monkeypatch.setenv(variable, value)
    result = CliRunner().invoke(app, ["eval", "--model", "openai:x", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    assert SECRET not in result.output
    assert " ".join(result.output.split()) == message
    assert not (tmp_path / "o").exists()


def test_openai_base_url_with_credentials_is_refused_by_the_provider_check(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", f"https://me:{SECRET}@api.example.com/v1")
    with pytest.raises(ConfigurationError) as caught:
        openai_provider.check("gpt-4o", ModelSettings())
    assert str(caught.value).startswith("openai:gpt-4o: OPENAI_BASE_URL must not hold a user name or password")
    assert SECRET not in str(caught.value)


def test_langchain_base_url_with_credentials_is_refused_by_the_provider_check():
    settings = ModelSettings(base_url=f"http://u:{SECRET}@127.0.0.1:1/v1")
    with pytest.raises(ConfigurationError) as caught:
        langchain_provider.check("openai:gpt-4o", settings)
    assert str(caught.value).startswith("langchain:openai:gpt-4o: the base URL must not hold a user name or password")
    assert SECRET not in str(caught.value)


def test_good_base_urls_pass():
    for url in ("http://127.0.0.1:8000/v1", "https://api.openai.com/v1", "http://[::1]:8000/v1", "http://localhost"):
        assert base_url_problem(url) is None
    assert redacted_url(f"https://u:{SECRET}@h/v1") == "https://[REDACTED]@h/v1"


@pytest.mark.parametrize(
    ("option", "value"),
    [("--lang", "fr"), ("--scoring", "fixd")],
)
def test_a_choice_error_has_no_pydantic_prefix(tmp_path, option, value):
    result = CliRunner().invoke(app, ["eval", option, value, "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    line = _error_line(result.output)
    assert line.startswith(f"Invalid value for '{option}': '{value}' is not one of "), line
    assert "Value error" not in result.output
