"""The load test (`make load`): gunicorn + PostgreSQL under a mixed workload, then checks."""
