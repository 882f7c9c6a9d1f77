"""Turn a nested config into MLflow params: flattened dotted keys, secrets redacted, values truncated."""
from __future__ import annotations

import re
from typing import Any

SECRET_KEY = re.compile(r"(password|passwd|token|secret|credential|(^|_)key$)",
                        re.IGNORECASE)
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


def redact(params: dict[str, Any]) -> dict[str, Any]:
    """Replace the value of every key that looks like a secret (password, token, secret, *key)."""
    return {k: (REDACTED if SECRET_KEY.search(k.rsplit(".", 1)[-1]) and v not in (None, "") else v)
            for k, v in params.items()}


def to_mlflow_params(config: dict[str, Any]) -> dict[str, str]:
    return {k: str(v)[:MAX_VALUE_LEN] for k, v in redact(flatten(config)).items()}
