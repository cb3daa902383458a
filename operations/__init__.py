"""What an operator looks at: health and readiness, metrics, beat's heartbeat, backups."""
