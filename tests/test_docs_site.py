"""The documentation site builds as ``make docs`` builds it, strictly: a broken link, a missing anchor, a page left
out of the nav or a docstring mkdocstrings cannot read fails the build (about 5 s)."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

HAVE_MKDOCS = all(importlib.util.find_spec(m) is not None for m in ("mkdocs", "material", "mkdocstrings_handlers"))


@pytest.mark.skipif(not HAVE_MKDOCS, reason="needs the dev extra's mkdocs-material and mkdocstrings-python")
def test_the_site_builds_strictly_with_no_warning(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "WARNING" not in log, log[-5000:]
    for page in ("index.html", "getting-started/index.html", "reference/config/index.html",
                 "reference/api/index.html", "benchmarks/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    api = (tmp_path / "site" / "reference" / "api" / "index.html").read_text()
    for name in ("minimize", "maximize", "Study", "Trial", "Result", "AskTellAlgorithm", "Task"):
        assert 'id="hpoflow.' in api and name in api, name
    config = (tmp_path / "site" / "reference" / "config" / "index.html").read_text()
    assert "<td><code>breast_cancer</code></td>" in config and "rf|mlp|gb" in config  # the escaped pipe: one cell


def test_the_broken_link_check_is_on(tmp_path):
    """mkdocs.yml reports broken links and anchors as warnings, which --strict turns into a failed build."""
    import yaml

    cfg = yaml.safe_load((REPO / "mkdocs.yml").read_text().replace("!!python", "#"))
    assert cfg["strict"] is True
    assert {k: cfg["validation"][k] for k in ("not_found", "anchors", "omitted_files", "unrecognized_links")} == \
        dict.fromkeys(("not_found", "anchors", "omitted_files", "unrecognized_links"), "warn")
