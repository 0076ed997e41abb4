{#-
    Every pre-purge copy of the data a request's purge runs removed: the old location of each
    partition (or unpartitioned table) the runs swapped, which the run's backup table points at
    and which is recorded as stale data.  With the date retention will delete it under the
    policies in force, and the date it did (the first successful delete in `retention_log` of
    that location, or of that backup partition wherever reaping moved it).  What the request's
    status rests on is the verification of bytes; this lists the copies for the certificate.
-#}
{{ config(materialized='table', enabled=compliance.purge_configured()) }}
-- depends_on: {{ ref('purge_log') }}
-- depends_on: {{ ref('retention_log') }}
-- depends_on: {{ ref('retention_policies') }}

{{ compliance.erasure_copies_sql(ref('erasure_request_log'), ref('purge_log'), ref('retention_log'), ref('retention_policies')) }}
