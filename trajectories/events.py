"""What the trajectories app announces to the apps above it, which it never imports."""

from django.dispatch import Signal

# Sent inside the transaction that stores a trajectory whose file labels why it failed, with
# `trajectory` (the stored row), `labels` (its `canonical.FailureLabel`s) and `file` (the file's name).
failure_labels_read = Signal()
