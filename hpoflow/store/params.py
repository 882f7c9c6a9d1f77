"""Turn a nested config into MLflow params: flattened dotted keys, secrets redacted, values truncated.

Secrets are never written anywhere (params, tags, messages, config files, checkpoints): the value of a
secret-looking key becomes ``***``, and so does the userinfo password of any URI in any text
(``scheme://user:pw@host`` -> ``scheme://user:***@host``; a bare ``scheme://token@host`` -> ``scheme://***@host``).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

SECRET_KEY = re.compile(r"(password|passwd|passphrase|token|secret|credential|(^|_)pwd$|(^|_)auth($|_)"
                        r"|(^|_|api|access|private)key$)", re.IGNORECASE)
URI_CREDENTIALS = re.compile(r"(\b[a-z][a-z0-9+.-]*://)([^:/@\s]+:)?[^/\s]+@", re.IGNORECASE)
REDACTED = "***"
YAML_ENTRY = re.compile(r"^(\s*(?:-\s+)?)([\w.-]+)(:[ \t]+)(\S[^\n]*)$", re.MULTILINE)
MAX_VALUE_LEN = 6000  # MLflow's limit on a param value


ASSIGNMENT = re.compile(r"([\w.-]+)=([^,\s'\"]+)")


def mask_secrets(text: str) -> str:
    """``text`` with every URI's userinfo password (a lone user name taken as a token) and the value of every
    secret-looking ``key=value`` (``tracking.password=x``, as in Hydra's override lists) replaced by ``***``."""
    text = URI_CREDENTIALS.sub(lambda m: f"{m.group(1)}{m.group(2) or ''}{REDACTED}@", text)
    return ASSIGNMENT.sub(lambda m: f"{m.group(1)}={REDACTED}" if SECRET_KEY.search(m.group(1).rsplit(".", 1)[-1])
                          else m.group(0), text)


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
        return mask_secrets(value)
    return value


def redact(params: dict[str, Any]) -> dict[str, Any]:
    """Replace the value of every key that looks like a secret (password, passphrase, pwd, auth, token,
    secret, credentials, *key)."""
    return {k: redact_value(k, v) for k, v in params.items()}


def redact_tree(config: Any, key: str = "") -> Any:
    """The same redaction on a nested config (for the config.yaml artifact)."""
    if isinstance(config, dict):
        return {k: redact_tree(v, str(k)) for k, v in config.items()}
    if isinstance(config, list):
        return [redact_tree(v, key) for v in config]
    return redact_value(key, config)


def to_mlflow_params(config: dict[str, Any]) -> dict[str, str]:
    """Flattened, redacted params; a list's secrets too (a study's override list may hold a store password)."""
    return {k: mask_secrets(str(v))[:MAX_VALUE_LEN] for k, v in redact(flatten(config)).items()}


def redact_text_file(path: str | Path) -> bool:
    """Mask the secrets in a text file (e.g. Hydra's ``.hydra/*.yaml``) in place; True if it changed.

    Hydra writes the composed config and the command line into the run folder before the job starts; a
    YAML file's secret-looking keys get ``***`` as well (``password: x`` is no ``key=value``).
    """
    import os
    import tempfile

    path = Path(path)
    try:
        text = path.read_text()
    except OSError:
        return False
    def entry(m: re.Match[str]) -> str:
        secret = SECRET_KEY.search(m.group(2)) and m.group(4).strip() not in ("null", "''", '""', f"'{REDACTED}'")
        return f"{m.group(1)}{m.group(2)}{m.group(3)}'{REDACTED}'" if secret else m.group(0)

    masked = YAML_ENTRY.sub(entry, mask_secrets(text))
    if masked == text:
        return False
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(masked)
    os.replace(tmp, path)  # atomic: parallel jobs of a sweep may mask the same multirun.yaml
    return True
