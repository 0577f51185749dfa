"""Writes of gold trajectories, reviews, requirements and judge audits: one module per operation."""
