"""The live counterpart of a suite task (scripts/lc_suite/live.py): its domain is the whole space, a configuration
is trained once by the recorder's trainer, a continued trial gets the next values of the same curve and is charged
only the units it adds, and the trainer agrees with the recording on a recorded configuration."""
from __future__ import annotations

import numpy as np
from scipy.stats import spearmanr

from scripts.lc_suite.live import LiveSuiteTask


def test_a_continued_trial_reads_on_along_the_same_trained_curve_and_is_charged_the_units_added():
    task = LiveSuiteTask("breast_cancer-gb", seed=0)
    assert task.candidates is None and task.optimum is None and task.fidelity.max == 30
    config = task.space.decode(task.space.encode(task.configs[3]))  # any point of the space decodes to a config
    first = task.evaluate_at(config, fidelity=3, config_id=7, round=1)
    later = task.evaluate_at(config, fidelity=9, config_id=7, round=2)
    curve = task.trained(config)["val_error"]
    assert first.cost == 3 and later.cost == 6  # the units added
    assert [v for _, v in first.curve] == list(curve[:3]) and [v for _, v in later.curve] == list(curve[3:9])
    assert later.value == curve[8] and later.metrics["test_value"] == task.trained(config)["test_error"][8]
    assert len(task._trained) == 1  # trained once: the continuation read the same curve


def test_the_live_trainer_ranks_recorded_configurations_as_the_recording_does():
    task = LiveSuiteTask("breast_cancer-gb", seed=0)
    rows = list(range(0, 1024, 128))
    live = [task.trained(task.configs[i])["val_error"][-1] for i in rows]
    recorded = [task.curves[i][-1] for i in rows]
    assert spearmanr(live, recorded).statistic > 0.5  # another seed, the same trainer: close, not identical
    assert np.mean(np.abs(np.subtract(live, recorded))) < 0.05
