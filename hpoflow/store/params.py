"""Turn a nested config into MLflow params: flattened dotted keys, secrets redacted, values truncated.

Secrets are never written anywhere (params, tags, messages, config files, checkpoints): the value of a
secret-looking key becomes ``***``, and so does the userinfo password of any URI in any text
(``scheme://user:pw@host`` -> ``scheme://user:***@host``; a bare ``scheme://token@host`` -> ``scheme://***@host``).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

SECRET_KEY = re.compile(r"(password|passwd|passphrase|passcode|token|secret|credential|authoriz|bearer|webhook|cookie"
                        r"|(^|[_-])(pwd|pat|pass|sig|signature)$|(^|[_-])auth($|[_-])"
                        r"|(^|[_\-]|api|access|private)key$)", re.IGNORECASE)
# scheme://[user:]password@ -- also as Hydra writes it in its run files (``http\://user\:pw@``)
URI_CREDENTIALS = re.compile(r"((?<![a-z0-9+.-])[a-z0-9+.-]+\\*:\\*/\\*/)((?:[^:/@\s\\]|\\(?!\\*:))+\\*:)?[^/\s@]+@",
                             re.IGNORECASE)
QUERY_SECRET = re.compile(  # an Azure SAS ``sig=``, an OAuth ``access_token=`` in a URL
    r"([?&;](?:sig|signature|token|access_token|api[_-]?key|key|code|password|secret)=)[^&#\s'\"]+", re.IGNORECASE)
WEBHOOK = re.compile(r"(https?://(?:hooks\.slack\.com/(?:services|workflows)|discord(?:app)?\.com/api/webhooks"
                     r"|[\w.-]*\.webhook\.office\.com/webhookb2|outlook\.office\.com/webhook)/)[^\s'\",]+",
                     re.IGNORECASE)
BEARER = re.compile(r"\b(bearer|basic(?=\s+[A-Za-z0-9+/]{12,}={0,2}(?![\w+/])))(\s+)(?!\*\*\*)[A-Za-z0-9._~+/=-]{6,}",
                    re.IGNORECASE)  # an HTTP Authorization header's credentials
# a setting about a secret, not the secret: ``RAY_AUTH_MODE=disabled``, ``create_token_if_missing=True``
NOT_SECRET_KEY = re.compile(r"(^|[_-])(mode|type|method|scheme|kind|enabled|disabled|required|if[_-]missing|missing"
                            r"|timeout|ttl|expiry|expires|length|count)$", re.IGNORECASE)
# a database URI's lone userinfo is the user name (its password comes from the environment or a file)
DATABASE_SCHEME = re.compile(r"(?:postgres|postgresql|mysql|mariadb|mssql|oracle|cockroachdb)(?:\+[\w.-]+)?",
                             re.IGNORECASE)
REDACTED = "***"
YAML_ENTRY = re.compile(r"^([ \t]*(?:-[ \t]+)?)([\w.-]+)(:[ \t]+)(\S[^\n]*)$", re.MULTILINE)
COLON_ENTRY = re.compile(r"(?<![\w.-])([\w.-]+)(\s*:\s+|\s*:(?=[\"']))(?!\*\*\*|'\*\*\*')([^\s,;)\]}]+)")
HYDRA_PLACEHOLDERS = ("[value1,value2]", "\\'value1,value2\\'", "'value1,value2'", "value1,value2")
MAX_VALUE_LEN = 6000  # MLflow's limit on a param value


ASSIGNMENT = re.compile(r"(?<![\w.-])([\w.-]+)=((?:\[[^\]\s]*\]?)|\\?'[^'\s]*'?|[^,\s'\"]+)")


def is_secret_key(key: str) -> bool:
    """A key whose value is never written: its last dotted part looks like a password, token, key, signature..."""
    last = str(key).rsplit(".", 1)[-1]
    return bool(SECRET_KEY.search(last)) and not NOT_SECRET_KEY.search(last)


def _uri_userinfo(m: re.Match[str]) -> str:
    if m.group(2) is None and DATABASE_SCHEME.fullmatch(m.group(1).replace("\\", "").rstrip(":/")):
        return m.group(0)  # postgresql://user@host: a user name, no password
    return f"{m.group(1)}{m.group(2) or ''}{REDACTED}@"


def mask_secrets(text: str) -> str:
    """``text`` with every secret replaced by ``***``: the one masking function for everything hpoflow prints or
    writes (and, through :mod:`hpoflow.store.output_masking`, everything its libraries print and log).

    Masked: a URI's userinfo password (a lone user name taken as a token, except a database URI's user name;
    Hydra's ``http\\://u\\:pw@`` too),
    secret query parameters (``sig=``, ``access_token=``), webhook URLs, ``Bearer <token>``, and the value of a
    secret-looking key written ``key=value`` (Hydra's overrides), ``key: value`` (YAML, headers) or in a list
    (``key=[a,b]``). Hydra's own placeholder hint (``key=[value1,value2]``) is left as it is, and so is a setting
    about a secret (``RAY_AUTH_MODE=disabled``). Linear in the length of ``text``.
    """
    text = URI_CREDENTIALS.sub(_uri_userinfo, text)
    text = QUERY_SECRET.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = WEBHOOK.sub(lambda m: f"{m.group(1)}{REDACTED}", text)
    text = BEARER.sub(lambda m: f"{m.group(1)}{m.group(2)}{REDACTED}", text)

    def assignment(m: re.Match[str]) -> str:
        value = m.group(2)
        if not is_secret_key(m.group(1)) and value.startswith("["):  # a list under a plain key: its items
            return f"{m.group(1)}={ASSIGNMENT.sub(assignment, value)}"
        if not is_secret_key(m.group(1)) or value in HYDRA_PLACEHOLDERS or value.strip("'\\[]") == REDACTED:
            return m.group(0)
        return f"{m.group(1)}=[{REDACTED}]" if value.startswith("[") else f"{m.group(1)}={REDACTED}"

    def colon(m: re.Match[str]) -> str:
        value = m.group(3).strip("'\"")
        if (not is_secret_key(m.group(1)) or value in ("", "null", "None", REDACTED) or m.group(1).lower() == "key"
                or value.lower() in ("bearer", "basic")):  # a header's scheme: its credentials are masked above
            return m.group(0)
        return f"{m.group(1)}{m.group(2)}'{REDACTED}'"

    return COLON_ENTRY.sub(colon, ASSIGNMENT.sub(assignment, text))


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
    if is_secret_key(key) and value not in (None, ""):
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


def mask_text(text: str) -> str:
    """:func:`mask_secrets` for a whole YAML document: a secret-looking key's value becomes ``'***'`` even when it
    is a lone word on its line (``password: x``, a list item ``- token: y``)."""
    def entry(m: re.Match[str]) -> str:
        secret = is_secret_key(m.group(2)) and m.group(4).strip() not in ("null", "''", '""', f"'{REDACTED}'")
        return f"{m.group(1)}{m.group(2)}{m.group(3)}'{REDACTED}'" if secret else m.group(0)

    return YAML_ENTRY.sub(entry, mask_secrets(text))


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
    masked = mask_text(text)
    if masked == text:
        return False
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(fd, "w") as fh:
        fh.write(masked)
    os.replace(tmp, path)  # atomic: parallel jobs of a sweep may mask the same multirun.yaml
    return True
