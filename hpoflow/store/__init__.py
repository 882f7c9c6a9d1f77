"""The tracking store: the MLflow tracker (batched writes, status, artifacts), the run lease and heartbeat, the
masking of secrets, studies (sweep parent runs, re-run planning), resume planning and the stale-run command.

May import: :mod:`hpoflow.core`, :mod:`hpoflow.config`, MLflow. Never the runner, the CLI or the report."""
