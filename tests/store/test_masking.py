"""The one masking function: every secret form the issue-31 re-test found, and nothing that is not a secret."""
from __future__ import annotations

import io
import logging

from hpoflow.store.output_masking import MaskedStream, _masked_record_factory
from hpoflow.store.params import mask_secrets, mask_text, redact_tree, to_mlflow_params

PW = "s3cretPW"


def test_secret_keys_of_every_spelling_are_masked():
    text = (f"api-key={PW} authorization={PW} github_pat={PW} passcode={PW} bearer={PW} slack_webhook={PW} "
            f"sig={PW} x.client-secret={PW}")
    assert PW not in mask_secrets(text) and mask_secrets(text).count("***") == 8
    params = to_mlflow_params({"api-key": PW, "Authorization": PW, "github_pat": PW, "passcode": PW, "bearer": PW})
    assert set(params.values()) == {"***"}


def test_secret_values_under_plain_keys_are_masked():
    hook = f"https://hooks.slack.com/services/T000/B000/{PW}"
    sas = f"https://acct.blob.core.windows.net/c/x?sv=2022-11-02&sig={PW}%3D&se=2030"
    config = {"notify": hook, "blob": sas, "headers": [f"Authorization: Bearer {PW}xyz"],
              "extra": [f"password={PW}", "seed=1"], "mirrors": [f"https://bob:{PW}@h/x"]}
    redacted = redact_tree(config)
    assert PW not in repr(redacted) and PW not in repr(to_mlflow_params(config))
    assert redacted["extra"][1] == "seed=1" and redacted["blob"].startswith("https://acct.blob.core.windows.net/c/x?sv=")


def test_hydra_escaped_uris_and_yaml_are_masked():
    assert mask_secrets(f"- tracking.uri=http\\://user\\:{PW}@127.0.0.1\\:9/") == \
        "- tracking.uri=http\\://user\\:***@127.0.0.1\\:9/"
    assert PW not in mask_secrets(f"['tracking.uri=http\\\\://user\\\\:{PW}@h\\\\:9/']")  # repr of the same
    assert PW not in mask_text(f"tracking:\n  password: {PW}\n  items:\n  - token: {PW}\n")


def test_what_is_no_secret_is_left_alone():
    hint = ("1. To use it as a list, use key=[value1,value2] 2. To use it as string, quote the value: "
            "key=\\'value1,value2\\'")
    assert mask_secrets(hint) == hint  # Hydra's placeholder text is no secret (it was garbled to key=***,value2])
    plain = ("sqlite:////tmp/a@b.db author=me keys=3 keyboard=qwerty monkey=1 (key: algo.beta) basic settings "
             "Error: cannot override 'algo.beta'")
    assert mask_secrets(plain) == plain


def test_the_stream_masks_a_secret_split_over_writes_and_log_records_are_masked():
    raw = io.StringIO()
    stream = MaskedStream(raw)
    stream.write("uri http://u:s3cr")
    stream.write("etPW@h done\nnext line")
    stream.flush()
    assert "s3cretPW" not in raw.getvalue() and "http://u:***@h done" in raw.getvalue()
    factory = _masked_record_factory(logging.LogRecord)
    record = factory("x", logging.INFO, __file__, 1, "job %s", (f"tracking.uri=http://u:{PW}@h",), None)
    assert record.getMessage() == "job tracking.uri=http://u:***@h"


# shapes that made one of the patterns try every start position (issue 42: 49.5 s on a 40,000-character line)
SLOW_SHAPES = ["a", "_", "1", "\n", "key.", "-key", "token+", "a=", "a.b-c_", "x://b:", "http://", "\\"]


def test_masking_is_linear_on_a_1_mb_line_of_every_slow_shape():
    import time

    for unit in SLOW_SHAPES:
        line = unit * (1_000_000 // len(unit))
        start = time.perf_counter()
        mask_text(line)
        assert time.perf_counter() - start < 5.0, unit  # quadratic: hours; linear: ~0.2 s
    line = "x=1 " * 250_000 + f"http://u:{PW}@h password={PW}"
    start = time.perf_counter()
    assert PW not in mask_secrets(line)
    assert time.perf_counter() - start < 5.0


def test_a_long_line_is_masked_and_echoed_up_to_the_cap_only():
    from hpoflow.store.output_masking import MAX_LINE, mask_line

    for tail in (f" http://u:{PW}@h", f" password={PW}", f" Bearer {PW}xyz", f"/ftp://u:{PW}@h/"):
        for pad in range(MAX_LINE - 40, MAX_LINE + 5, 3):  # the cut in every place of the secret
            word = "word/" if tail.startswith("/") else "word "  # a line without spaces is cut after a slash
            line = word * (pad // 5) + "w" * (pad % 5) + tail + word * 200_000 + "\n"
            out = mask_line(line)
            assert PW not in out and PW[:4] not in out and len(out) < MAX_LINE + 100 and out.endswith("shown]\n")
    out = mask_line("a" * 10**6)  # one long word: no secret can start in it
    assert out == "a" * MAX_LINE + f" [... {10**6 - MAX_LINE:,} more characters not shown]"
    out = mask_line("k=" + "a" * 10**6)  # no space, no slash, a value: nothing of the head can be told from a secret
    assert out == "*** [... 1,000,002 more characters not shown]"
    out = mask_line("token:" + "a" * 10**6)
    assert out == "*** [... 1,000,006 more characters not shown]"
    raw = io.StringIO()
    stream = MaskedStream(raw)
    stream.write("ok line\n" + "y " * 10**6 + "\nlast\n")
    assert raw.getvalue().startswith("ok line\ny y ") and raw.getvalue().endswith("not shown]\nlast\n")


def test_settings_about_secrets_and_database_user_names_stay_readable():
    readable = ["Set RAY_AUTH_MODE=disabled to opt out", "create_token_if_missing=False, token_type: bearer",
                "mlflow ui --backend-store-uri postgresql+psycopg2://alice@127.0.0.1:5433/mlflow",
                "mysql://bob@db/x", "auth_timeout=30"]
    for text in readable:
        assert mask_secrets(text) == text
    hidden = {f"postgresql+psycopg2://alice:{PW}@127.0.0.1:5433/mlflow": "postgresql+psycopg2://alice:***@",
              f"https://{PW}@github.com/x": "https://***@", f"+task.session_cookie={PW}": "session_cookie=***",
              f"RAY_AUTH_TOKEN={PW}": "RAY_AUTH_TOKEN=***", f"_http://u:{PW}@h": "_http://u:***@h",
              f"auth={PW}": "auth=***", f"postgresql://u@h/db?password={PW}": "?password=***"}
    for text, expected in hidden.items():
        assert PW not in mask_secrets(text) and expected in mask_secrets(text), text
    assert to_mlflow_params({"task": {"session_cookie": PW, "auth_mode": "none"}}) == \
        {"task.session_cookie": "***", "task.auth_mode": "none"}
