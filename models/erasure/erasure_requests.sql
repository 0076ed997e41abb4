{#-
    One row per erasure request: its status, what is missing and where (docs/erasure.md, "Status").
    The status rests on the verifier's reading of the bytes (erasure_verification), never on the
    purge's own logs: `live_clean` only when a verification that started after the request's last
    purge (and the last restore) found none of its ids in any onboarded table, `erased` only when
    one that also started after the last deletion of a copy found none anywhere.  The SQL is
    compliance.erasure_ledger_sql, which the certificate runs too, over the same copies
    (erasure_copies_sql read from the logs, not the erasure_copies table, which may be older or
    not built yet).  Counts, dates, tables and locations only: no id is ever copied here.
-#}
{{ config(materialized='table', enabled=compliance.purge_configured()) }}
-- depends_on: {{ source('compliance', 'id_table') }}
-- depends_on: {{ ref('purge_log') }}
-- depends_on: {{ ref('retention_log') }}
-- depends_on: {{ ref('erasure_verification') }}
-- depends_on: {{ ref('erasure_verification_findings') }}
-- depends_on: {{ ref('retention_policies') }}

{{ compliance.erasure_ledger_sql({
    'request_log': ref('erasure_request_log'),
    'purge_log': ref('purge_log'),
    'retention_log': ref('retention_log'),
    'events': compliance.erasure_relation('erasure_events'),
    'verification': ref('erasure_verification'),
    'findings': ref('erasure_verification_findings'),
    'copies_sql': compliance.erasure_copies_sql(ref('erasure_request_log'), ref('purge_log'), ref('retention_log'), ref('retention_policies')),
}) }}
