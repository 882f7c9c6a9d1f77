"""Issue 31's report paper cuts: run ids as code (not Markdown backticks) in HTML, algorithm-specific settings
not listed as shared, and a sentence when the critical-difference order differs from the mean-regret table."""
from __future__ import annotations

import pandas as pd

from hpoflow.report.build import order_note, study_config
from hpoflow.report.html import Table, to_html


def test_run_ids_render_as_code_in_html_not_backticks():
    page = to_html([Table(pd.DataFrame({"run": ["`465e0c8c23a8`"], "best": ["**1.2**"]}))], "t")
    assert "<code>465e0c8c23a8</code>" in page and "`" not in page.split("<body>")[1] and "<b>1.2</b>" in page


def test_settings_of_some_algorithms_are_not_listed_as_shared():
    runs = pd.DataFrame({"tags.algo": ["random", "gp_ei", "gp_ei"], "params.seed": ["0", "0", "1"],
                         "params.algo.xi": [None, "0.01", "0.01"], "params.budget.rounds": ["4", "4", "4"]})
    table, _ = study_config(runs)
    rows = {r.setting: r for r in table.itertuples()}
    assert rows["algo.xi"].varies == "only gp_ei" and rows["budget.rounds"].varies == ""
    assert rows["seed"].varies == "swept"


def test_the_order_note_names_both_leaders():
    note = order_note("random", "gp_ei")
    assert note.startswith("Here random ranks first and gp_ei has the lowest mean normalised regret")
    assert "how often a method wins, not by how much" in note
    assert order_note("gp_ei", "random", tied=True).startswith("Here random has the lowest mean normalised regret "
                                                                "but ties on mean rank with gp_ei")


def test_the_order_note_never_ties_a_method_with_itself():
    """A method first both by mean rank and by mean regret (tied ranks computed against itself): the note says the
    lower order differs, never "ties on mean rank with" the same method."""
    note = order_note("freeze_thaw", "freeze_thaw", tied=True)
    assert "ties on mean rank" not in note and note.startswith("The order here differs")
