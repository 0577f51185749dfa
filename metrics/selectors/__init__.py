"""Reads of the metrics app: evaluation jobs and scores, which evaluation speaks for a run, every source's
verdicts (per task, per source), the leaderboard and the comparison of runs. Writes live in `metrics.services`."""
