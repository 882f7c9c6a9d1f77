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
