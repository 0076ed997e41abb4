"""Retention settings the test suites share (plain constants: no fixtures, no side effects)."""

from __future__ import annotations

# the columns of seeds/retention/retention_policies.csv, as the seed's header line
RETENTION_POLICY_HEADER = (
    "table_pattern,backup_retention_days,backup_retention_versions,trash_retention_days,staging_retention_hours,"
    "backup_reap_days,backup_dir,partition_column,partition_date_format,partition_age,partition_retention_days,"
    "snapshot_column,snapshot_retention_count,stale_retention_days\n"
)
# every seed column read as a string, as dbt_project.yml declares them
RETENTION_POLICY_TYPES = {name: "string" for name in RETENTION_POLICY_HEADER.strip().split(",")}

# every policy at zero (allowed by retention_allow_short): a pass deletes every backup, staging,
# trash and stale copy at once
RETENTION_ZERO = {
    "backup_retention_days": 0,
    "backup_retention_versions": 0,
    "trash_retention_days": 0,
    "staging_retention_hours": 0,
    "stale_retention_days": 0,
    "retention_allow_short": True,
}
