"""A run folder's name: ``<time>-<algo>-<task>-<uid>``; a resume's folder is named after the resumed run."""
from __future__ import annotations

import json
from pathlib import Path

from hpoflow.config.resolvers import run_label


def test_a_resume_folder_is_named_after_the_resumed_run(tmp_path: Path):
    run = tmp_path / "16-00-00-turbo-rastrigin-abcd1234"
    run.mkdir()
    (run / "checkpoint.json").write_text(json.dumps({"meta": {"config": {"algo": {"name": "turbo"},
                                                                          "task": {"name": "rastrigin"}}}}))
    assert run_label("gp_ei", "breast_cancer", str(run)) == "turbo-rastrigin"  # not the command's defaults
    assert run_label("gp_ei", "breast_cancer", str(run / "checkpoint.json")) == "turbo-rastrigin"
    assert run_label("gp_ei", "breast_cancer", None) == "gp_ei-breast_cancer"
    assert run_label("gp_ei", "breast_cancer", "0123456789abcdef0123456789abcdef") == "resume"
