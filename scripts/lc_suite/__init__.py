"""The learning-curve suite's recorder: datasets (``datasets.py``), model families and their designs
(``families.py``), many small networks trained at once (``batched_mlp.py``), boosted trees (``boosting.py``) and the
sharded, resumable driver (``scripts/record_suite.py``). Recording only: the replay reads the shipped arrays."""
