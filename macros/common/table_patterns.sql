-- noqa: disable=LT02
{#
    Table patterns, shared by every capability that selects tables: the purge's whitelist and
    blacklist, retention's scope and policy rows, onboarding.  Gobblin's grammar: `db`,
    `db.table`, `db*`, `db.table*`, entries separated by commas, case-insensitive.  A trailing
    `*` is a prefix match on the last part.
#}
{% macro parse_table_patterns(value, var_name) -%}
    {%- set entries = value if (value is iterable and value is not string) else ((value or '') | string).split(',') -%}
    {%- set patterns = [] -%}
    {%- for raw in entries -%}
        {%- set entry = (raw | string | trim | lower) -%}
        {%- if entry -%}
            {%- set match = modules.re.match('^([a-z0-9_]+)(\\*)?$', entry) or modules.re.match('^([a-z0-9_]+)\\.([a-z0-9_]+)(\\*)?$', entry) -%}
            {%- if not match -%}
                {%- do compliance.config_error(
                    "Var " ~ var_name ~ " has an entry " ~ tojson(raw | string | trim) ~ " that is not a table pattern. "
                    ~ "Accepted forms, comma separated: db, db.table, db*, db.table* (for example 'sales, crm.contact*').") -%}
            {%- endif -%}
            {%- set groups = match.groups() -%}
            {%- if groups | length == 2 -%}
                {%- do patterns.append({'database': groups[0], 'table': none, 'prefix': groups[1] is not none, 'text': entry}) -%}
            {%- else -%}
                {%- do patterns.append({'database': groups[0], 'table': groups[1], 'prefix': groups[2] is not none, 'text': entry}) -%}
            {%- endif -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(patterns) }}
{%- endmacro %}

{% macro table_pattern_matches(pattern, database, table) -%}
    {%- set db = database | lower -%}
    {%- set tb = table | lower -%}
    {%- if pattern.table is none -%}
        {{ return(db.startswith(pattern.database) if pattern.prefix else db == pattern.database) }}
    {%- endif -%}
    {%- if db != pattern.database -%}
        {{ return(false) }}
    {%- endif -%}
    {{ return(tb.startswith(pattern.table) if pattern.prefix else tb == pattern.table) }}
{%- endmacro %}

{#- True when `database.table` matches the whitelist and not the blacklist (the blacklist wins). -#}
{% macro table_selected(database, table, whitelist, blacklist) -%}
    {%- set ns = namespace(white=false, black=false) -%}
    {%- for pattern in whitelist -%}
        {%- if compliance.table_pattern_matches(pattern, database, table) -%}{%- set ns.white = true -%}{%- endif -%}
    {%- endfor -%}
    {%- for pattern in blacklist -%}
        {%- if compliance.table_pattern_matches(pattern, database, table) -%}{%- set ns.black = true -%}{%- endif -%}
    {%- endfor -%}
    {{ return(ns.white and not ns.black) }}
{%- endmacro %}

{#- True when some table of `database` could match the whitelist: the only databases ever listed. -#}
{% macro database_selected(database, whitelist) -%}
    {%- set ns = namespace(hit=false) -%}
    {%- for pattern in whitelist -%}
        {%- if pattern.table is none and pattern.prefix -%}
            {%- if (database | lower).startswith(pattern.database) -%}{%- set ns.hit = true -%}{%- endif -%}
        {%- elif (database | lower) == pattern.database -%}
            {%- set ns.hit = true -%}
        {%- endif -%}
    {%- endfor -%}
    {{ return(ns.hit) }}
{%- endmacro %}

{#-
    Of `rows` (dicts whose `table_pattern` holds patterns in this grammar), the one whose pattern
    matches the table most specifically: `db.table` beats `db.table*` beats `db` beats `db*`, a
    longer pattern beats a shorter one.  {row, pattern} or none.  `name` labels a bad pattern.
-#}
{% macro most_specific_match(database, table, rows, name) -%}
    {%- set ns = namespace(best=none, rank=-1) -%}
    {%- for row in rows -%}
        {%- for pattern in compliance.parse_table_patterns(row['table_pattern'], name) -%}
            {%- if compliance.table_pattern_matches(pattern, database, table) -%}
                {%- set rank = ((2 if pattern.table is not none else 0) + (0 if pattern.prefix else 1)) * 1000
                    + (pattern.text | length) -%}
                {%- if rank > ns.rank -%}
                    {%- set ns.best = {'row': row, 'pattern': pattern} -%}
                    {%- set ns.rank = rank -%}
                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endfor -%}
    {{ return(ns.best) }}
{%- endmacro %}
