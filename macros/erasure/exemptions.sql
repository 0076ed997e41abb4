-- noqa: disable=LT02
{#
    Exemptions (docs/erasure.md, "Exemptions"): the tables a legal obligation keeps, from the seed
    that var `erasure_exemptions` names, and which of the verification's live tables each keeps.
    The ledger (requests.sql) takes the rows they keep out of `live_rows`.
#}
{#-
    The rows of the exemptions seed (var `erasure_exemptions`, default the seed `erasure_exemptions`):
    tables a legal obligation keeps (GDPR Art. 17(3)), each pattern with its legal basis, owner and
    review date, most specific first (`db.table` > `db.table*` > `db` > `db*`), each with its
    `problem`: none when the row exempts, else why it exempts nothing (erasure_exemption_problem).
    The most specific row matching a table decides for it, a row with a problem included: that
    table is then not exempt, and the ledger says why.  A pattern outside the grammar fails here,
    naming the entry.
-#}
{% macro erasure_exemption_rows() -%}
    {%- set rows = [] -%}
    {%- if not execute -%}{{ return(rows) }}{%- endif -%}
    {%- set relation = compliance.erasure_existing(compliance.erasure_relation(var('erasure_exemptions', 'erasure_exemptions'))) -%}
    {%- if relation is none -%}{{ return(rows) }}{%- endif -%}
    {%- set table = run_query('select table_pattern, legal_basis, owner, cast(review_date as string) as review_date from ' ~ relation) -%}
    {%- set today = run_started_at.strftime('%Y-%m-%d') -%}  {#- as erasure_today() -#}
    {%- for row in table.rows -%}
        {%- set exemption = {
            'basis': (row['legal_basis'] or '') | string | trim,
            'owner': (row['owner'] or '') | string | trim,
            'review_date': ((row['review_date'] or '') | string | trim)[:10],
        } -%}
        {%- set problem = compliance.erasure_exemption_problem(exemption, today) -%}
        {%- for pattern in compliance.parse_table_patterns(row['table_pattern'] or '', 'erasure_exemptions.table_pattern') -%}
            {%- do rows.append({
                'pattern': pattern,
                'rank': ((2 if pattern.table is not none else 0) + (0 if pattern.prefix else 1)) * 1000 + (pattern.text | length),
                'basis': exemption.basis,
                'owner': exemption.owner,
                'review_date': exemption.review_date,
                'problem': problem,
            }) -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(rows | sort(attribute='rank', reverse=true)) }}
{%- endmacro %}

{#- The run's date (UTC) as a SQL date literal: the day an exemption's review date is judged against. -#}
{% macro erasure_today() -%}
    date'{{ run_started_at.strftime('%Y-%m-%d') }}'
{%- endmacro %}

{#-
    Why an exemptions row exempts nothing, or none when it exempts: it needs a legal basis, an owner
    and a review date (YYYY-MM-DD) that has not passed (`today`, the run's UTC date).  A lapsed
    review date stops the exemption until the row is reviewed: an obligation to keep is not forever.
    assert_erasure_exemptions_have_a_basis fails on the same rows.
-#}
{% macro erasure_exemption_problem(exemption, today) -%}
    {%- set missing = [] -%}
    {%- for key, column in [('basis', 'legal_basis'), ('owner', 'owner'), ('review_date', 'review_date')] if not exemption[key] -%}
        {%- do missing.append(column) -%}
    {%- endfor -%}
    {%- if missing -%}
        {{ return('its row has no ' ~ missing | join(', no ') ~ ', so it exempts nothing until completed') }}
    {%- endif -%}
    {%- if not modules.re.match('^[0-9]{4}-[0-9]{2}-[0-9]{2}$', exemption.review_date) -%}
        {{ return("its review_date '" ~ exemption.review_date ~ "' is not a date (YYYY-MM-DD), so it exempts nothing until corrected") }}
    {%- endif -%}
    {%- set lapsed = exemption.review_date < today -%}
    {%- if lapsed -%}
        {{ return('its review date ' ~ exemption.review_date ~ ' has passed, so it exempts nothing until it is reviewed'
            ~ ' (renew review_date, or remove the row)') }}
    {%- endif -%}
    {{ return(none) }}
{%- endmacro %}

{#- Whether a table (two SQL columns) matches one parsed table pattern. -#}
{% macro erasure_pattern_predicate(pattern, database_column, table_column) -%}
    {%- set db = compliance.sql_string(pattern.database) -%}
    {%- if pattern.table is none -%}
        {%- if pattern.prefix -%}startswith(lower({{ database_column }}), {{ db }}){%- else -%}lower({{ database_column }}) = {{ db }}{%- endif -%}
    {%- else -%}
        lower({{ database_column }}) = {{ db }} and
        {%- if pattern.prefix %} startswith(lower({{ table_column }}), {{ compliance.sql_string(pattern.table) }})
        {%- else %} lower({{ table_column }}) = {{ compliance.sql_string(pattern.table) }}{%- endif -%}
    {%- endif -%}
{%- endmacro %}

{#-
    The live tables holding each verification's findings for a request, with the exemption that
    keeps each (the most specific matching row of the exemptions seed), one row per request,
    verification and table: request_id, verification_id, table_id, rows_holding_ids, legal_basis
    (null: not exempt), owner, review_date, and exemption_problem: why the row that matches it
    exempts nothing (no owner, a lapsed review date), null when none matches or it exempts.
-#}
{% macro erasure_live_tables_sql(findings) -%}
    {%- set findings = compliance.erasure_existing(findings) -%}
    {%- if findings is none -%}
    {{ compliance.empty_select_sql([['request_id', 'string'], ['verification_id', 'string'], ['table_id', 'string'],
        ['rows_holding_ids', 'bigint'], ['legal_basis', 'string'], ['owner', 'string'], ['review_date', 'string'],
        ['exemption_problem', 'string']]) }}
    {%- else -%}
    {%- set exemptions = compliance.erasure_exemption_rows() -%}
    select
        request_id,
        verification_id,
        concat(database_name, '.', table_name) as table_id,
        sum(rows_holding_ids) as rows_holding_ids,
        {%- for column in ['basis', 'owner', 'review_date', 'problem'] %}
        {% if exemptions -%}
        case
            {%- for exemption in exemptions %}
            {%- if column == 'problem' -%}{%- set value = exemption.problem -%}
            {%- elif exemption.problem is none -%}{%- set value = exemption[column] -%}
            {%- else -%}{%- set value = none -%}{%- endif %}
            when {{ compliance.erasure_pattern_predicate(exemption.pattern, 'database_name', 'table_name') }} then
                {{- ' ' ~ (compliance.sql_string(value) if value is not none else 'cast(null as string)') }}
            {%- endfor %}
        end
        {%- else -%}
        cast(null as string)
        {%- endif %} as {{ {'basis': 'legal_basis', 'problem': 'exemption_problem'}.get(column, column) }}{{ ',' if not loop.last }}
        {%- endfor %}
    from {{ findings }}
    where location_kind = 'live'
    group by request_id, verification_id, database_name, table_name
    {%- endif -%}
{%- endmacro %}
