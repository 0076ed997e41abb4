{#- Every file of a verified location was either read or skipped by its footer: none is unaccounted for. -#}
{% test erasure_files_add_up(model) -%}
    select *
    from {{ model }}
    where files_read + files_skipped != files_total
{%- endtest %}
