"""The helpers every app stands on: background jobs and their dispatch, API and form helpers, fields,
storage, request guards, error pages, health checks and event counters. Below every app but accounts."""
