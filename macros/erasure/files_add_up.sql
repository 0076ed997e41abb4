{#- Every file of a location read without an error was either read or skipped by its footer: none is unaccounted for. -#}
{% test erasure_files_add_up(model) -%}
    select *
    from {{ model }}
    where error is null and files_read + files_skipped != files_total
{%- endtest %}
