"""Trackers record runs: a Null tracker, and an MLflow tracker (mlflow imported only when used)."""
from hpoflow.tracking.base import NullTracker, Tracker

__all__ = ["NullTracker", "Tracker"]
