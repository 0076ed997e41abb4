{# Placeholder until the purge node lands: the node is named `purge`. #}
select 1 as placeholder
