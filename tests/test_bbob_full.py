"""experiment=bbob_full: the shrunk default and the full-scale override compose and validate with a budget of
20 x dim; a one-function slice runs through the CLI and the report draws its data profiles."""
from __future__ import annotations

import pytest
from hydra import compose, initialize_config_dir
from hydra.core.override_parser.overrides_parser import OverridesParser
from omegaconf import OmegaConf

from hpoflow.config import registry
from hpoflow.config.identity import register_resolvers
from hpoflow.config.resolvers import times
from hpoflow.config.schema import CONF_DIR, register_configs
from hpoflow.config.settings import validate
from tests.conftest import mlflow_runs

register_configs()
register_resolvers()


def _sweep(value: str) -> list[str]:
    """A sweeper value (``2,3,5`` or ``range(1,25)``) as the list of values Hydra would run."""
    override = OverridesParser.create().parse_override(f"k={value}")
    if override.is_sweep_override():
        return [str(v) for v in override.sweep_string_iterator()]
    return [override.get_value_element_as_str()]


def test_times_multiplies_integers_only():
    assert times("20", 3) == 60 and times(20) == 20
    with pytest.raises(ValueError, match="multiplies integers; got 'x'"):
        times(20, "x")


def test_shrunk_default_is_all_24_functions_dims_2_3_5_instance_1_with_20_x_dim_evaluations():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=bbob_full"], return_hydra_config=True)
        params = {k: _sweep(str(v)) for k, v in OmegaConf.to_container(cfg.hydra.sweeper.params).items()}
        assert cfg.tracking.experiment == "bbob_full"
        assert params["task"] == ["bbob"] and params["task.function"] == [str(f) for f in range(1, 25)]
        assert params["task.dim"] == ["2", "3", "5"] and params["task.instance"] == ["1"]
        assert {"random", "gp_ei", "turbo", "nevergrad_ngopt", "smac_hpo", "botorch_logei"} <= set(params["algo"])
        for algo in params["algo"]:
            if registry.get("algorithm", algo).missing():
                continue  # a peer without the extra: its job would stop with the pip install line
            raw = OmegaConf.to_container(compose(config_name="config", overrides=[
                "experiment=bbob_full", f"algo={algo}", "task.dim=3", "task.function=24"]), resolve=True)
            settings = validate(raw)
            assert settings.algo_entry.name == algo and raw["budget"]["rounds"] == 60


@pytest.mark.parametrize("dim", [2, 3, 5, 10, 20])
def test_full_scale_override_composes_with_20_x_dim_evaluations(dim):
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        raw = OmegaConf.to_container(compose(config_name="config", overrides=[
            "experiment=bbob_full", "algo=gp_ei", f"task.dim={dim}", "task.instance=5", "task.function=1"]),
            resolve=True)
    settings = validate(raw)
    assert raw["budget"]["rounds"] == 20 * dim and settings.task.dim == dim and settings.task.instance == 5


@pytest.mark.cli
def test_a_slice_runs_and_its_report_has_data_profiles(run_cli, store, tmp_path):
    run_cli("-m", "experiment=bbob_full", "task.function=1,15", "task.dim=2", "algo=random,gp_ei",
            f"tracking.uri={store}")
    runs = mlflow_runs(store, "bbob_full")
    assert len(runs) == 4 and all(r.info.status == "FINISHED" for r in runs)
    assert {r.data.params["budget.rounds"] for r in runs} == {"40"}
    out = tmp_path / "rep"
    printed = run_cli("experiment=bbob_full", f"tracking.uri={store}", f"report.out={out}",
                      module="hpoflow.report").stdout
    assert (out / "data_profile.png").is_file() and (out / "data_profile_groups.png").is_file()
    assert "Data profiles:" in printed and "d=2" in printed


def test_the_gp_discrete_ablation_composes_each_cell():
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["experiment=gp_discrete_ablation"], return_hydra_config=True)
        cells = OmegaConf.to_container(cfg.hydra.sweeper.cells)
        assert set(cells) == {"random", "relax", "snap"}
        assert _sweep(str(cfg.hydra.sweeper.params["seed"])) == ["0", "1", "2", "3", "4"]
        for cell in cells.values():
            raw = OmegaConf.to_container(compose(config_name="config", overrides=[
                "experiment=gp_discrete_ablation", "task.model=rf", "task.dataset=wine",
                *(f"{k}={v}" for k, v in cell.items())]), resolve=True)
            settings = validate(raw)
            assert settings.algo_entry.name == cell["algo"] and raw["budget"]["rounds"] == 20
            if "algo.discrete" in cell:
                assert settings.algo.discrete == cell["algo.discrete"]
