"""Turn a nested config into MLflow params: flattened dotted keys, secrets redacted, values truncated."""
from __future__ import annotations

import re
from typing import Any

SECRET_KEY = re.compile(r"(password|passwd|token|secret|credential|(^|_|api|access|private)key$)",
                        re.IGNORECASE)
URI_CREDENTIALS = re.compile(r"(\b[a-z][a-z0-9+.-]*://[^:/@\s]+:)[^@\s]+@", re.IGNORECASE)
REDACTED = "***"
MAX_VALUE_LEN = 6000  # MLflow's limit on a param value


def flatten(config: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": 1}``; lists stay values."""
    out: dict[str, Any] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value
    return out


def redact_value(key: str, value: Any) -> Any:
    """``***`` for a secret-looking key; a password inside a URI (``scheme://user:pw@host``) becomes ``***``."""
    if SECRET_KEY.search(key.rsplit(".", 1)[-1]) and value not in (None, ""):
        return REDACTED
    if isinstance(value, str):
        return URI_CREDENTIALS.sub(rf"\g<1>{REDACTED}@", value)
    return value


def redact(params: dict[str, Any]) -> dict[str, Any]:
    """Replace the value of every key that looks like a secret (password, token, secret, *key)."""
    return {k: redact_value(k, v) for k, v in params.items()}


def redact_tree(config: Any, key: str = "") -> Any:
    """The same redaction on a nested config (for the config.yaml artifact)."""
    if isinstance(config, dict):
        return {k: redact_tree(v, str(k)) for k, v in config.items()}
    if isinstance(config, list):
        return [redact_tree(v, key) for v in config]
    return redact_value(key, config)


def to_mlflow_params(config: dict[str, Any]) -> dict[str, str]:
    return {k: str(v)[:MAX_VALUE_LEN] for k, v in redact(flatten(config)).items()}
