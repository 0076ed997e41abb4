package lakehouse;

// Reads of Spark's session catalog that cost py4j round trips per object when walked from Python
// (about six per partition), or metastore calls per object: the partitions of many tables,
// answered in one call as one JSON document; the partitions of one table by their specs, in one
// filtered listing.  Compiled against the running Spark by Janino (catalog/jvm.py `compiled`).

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalog;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;
import org.apache.spark.sql.catalyst.expressions.And;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.EqualTo;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.IsNull;
import org.apache.spark.sql.catalyst.expressions.Literal;
import org.apache.spark.sql.catalyst.expressions.Or;
import org.apache.spark.sql.internal.SQLConf;

public class CatalogReads {

    // For each table (databases[i].tables[i]), in order: {"partitions": [[{column: value}, location]]}
    // or {"error": message}.  Values as the catalog holds them (unescaped), locations as Hadoop
    // path strings without a trailing slash.  Asked as a filter without predicates, which Hive
    // answers with its direct-SQL path (metastore.py `list_partitions`).
    // The external catalog is asked directly, with the names as the session catalog formats them
    // (lower case): the session catalog's own checks that the database and the table exist would
    // cost two more metastore calls per table, and a missing one fails its listing anyway.
    public String partitionLocations(SessionCatalog catalog, String[] databases, String[] tables,
                                     scala.collection.Seq noPredicates, String timeZone) throws Exception {
        ExternalCatalog external = catalog.externalCatalog();
        List out = new ArrayList();
        for (int i = 0; i < tables.length; i++) {
            Map entry = new LinkedHashMap();
            try {
                scala.collection.Iterator parts = external.listPartitionsByFilter(
                    databases[i].toLowerCase(java.util.Locale.ROOT), tables[i].toLowerCase(java.util.Locale.ROOT),
                    noPredicates, timeZone).iterator();
                List found = new ArrayList();
                while (parts.hasNext()) {
                    CatalogTablePartition part = (CatalogTablePartition) parts.next();
                    Map spec = new LinkedHashMap();
                    scala.collection.Iterator pairs = part.spec().iterator();
                    while (pairs.hasNext()) {
                        scala.Tuple2 pair = (scala.Tuple2) pairs.next();
                        spec.put(pair._1(), pair._2());
                    }
                    String location = new Path(part.location()).toString();
                    while (location.length() > 1 && location.endsWith("/")) {
                        location = location.substring(0, location.length() - 1);
                    }
                    List item = new ArrayList();
                    item.add(spec);
                    item.add(location);
                    found.add(item);
                }
                entry.put("partitions", found);
            } catch (Exception e) {
                entry.put("error", String.valueOf(e));
            }
            out.add(entry);
        }
        return new com.fasterxml.jackson.databind.ObjectMapper().writeValueAsString(out);
    }

    // The partitions of one table whose specs are given (values unescaped, as the catalog holds
    // them, row after row in `values`), in one call: a filter `(c1 = v1 and c2 = v2) or ...` with
    // each value typed as its column (as Spark types a partition's values), which Hive answers with
    // its direct-SQL path, where a `getPartition` per spec costs an ORM query each.  The filter only
    // narrows: what is returned, for each spec in order, is the partition whose spec equals it
    // string for string, or null when the catalog has none.
    public CatalogTablePartition[] partitionsBySpecs(SessionCatalog catalog, CatalogTable table,
                                                     String[] columns, String[] values, SQLConf conf)
            throws Exception {
        scala.collection.Seq attributes =
            org.apache.spark.sql.catalyst.types.DataTypeUtils.toAttributes(table.partitionSchema());
        AttributeReference[] keys = new AttributeReference[columns.length];  // as the catalog spells them
        for (int c = 0; c < columns.length; c++) {
            for (int a = 0; a < attributes.length(); a++) {
                AttributeReference candidate = (AttributeReference) attributes.apply(a);
                if (candidate.name().equalsIgnoreCase(columns[c])) {
                    keys[c] = candidate;
                }
            }
            if (keys[c] == null) {
                throw new IllegalArgumentException(table.identifier() + " has no partition column " + columns[c]);
            }
        }
        java.util.List predicates = new ArrayList();
        Expression filter = specsFilter(keys, values, conf);
        if (filter != null) {
            predicates.add(filter);
        }
        scala.collection.Iterator found = catalog.listPartitionsByFilter(table.identifier(),
            org.apache.spark.api.python.PythonUtils.toSeq(predicates)).iterator();
        Map byKey = new java.util.HashMap();
        while (found.hasNext()) {
            CatalogTablePartition part = (CatalogTablePartition) found.next();
            StringBuilder key = new StringBuilder();
            for (int c = 0; c < keys.length; c++) {
                scala.Option value = part.spec().get(keys[c].name());
                key.append(value.isDefined() ? (String) value.get() : "\u0001").append('\u0000');
            }
            byKey.put(key.toString(), part);
        }
        CatalogTablePartition[] out = new CatalogTablePartition[values.length / Math.max(1, keys.length)];
        for (int row = 0; row < out.length; row++) {
            StringBuilder key = new StringBuilder();
            for (int c = 0; c < keys.length; c++) {
                key.append(values[row * keys.length + c]).append('\u0000');
            }
            out[row] = (CatalogTablePartition) byKey.get(key.toString());
        }
        return out;
    }

    // `(k1 = v1 and k2 = v2) or ...` over the rows of `values`, each value cast to its key's type;
    // the null partition's name as `is null`.  A value that is not one of its type, or that Hive's
    // filter cannot carry, narrows nothing (the caller matches it as held); null when a row is
    // narrowed by nothing: every partition.  (`is null`, and a part Hive cannot carry, are
    // filtered by Spark after Hive lists every partition.)
    private Expression specsFilter(AttributeReference[] keys, String[] values, SQLConf conf) {
        Expression any = null;
        for (int row = 0; row * keys.length < values.length; row++) {
            Expression all = null;
            for (int c = 0; c < keys.length; c++) {
                String value = values[row * keys.length + c];
                Expression test = null;
                if ("__HIVE_DEFAULT_PARTITION__".equals(value)) {
                    test = new IsNull(keys[c]);
                } else if (pushable(keys[c].dataType(), value)) {
                    Object typed = null;
                    try {
                        typed = org.apache.spark.sql.util.PartitioningUtils
                            .castPartitionSpec(value, keys[c].dataType(), conf).eval(null);
                    } catch (RuntimeException e) {
                        typed = null;
                    }
                    if (typed != null) {
                        test = new EqualTo(keys[c], new Literal(typed, keys[c].dataType()));
                    }
                }
                if (test != null) {
                    all = all == null ? test : new And(all, test);
                }
            }
            if (all == null) {
                return null;
            }
            any = any == null ? all : new Or(any, all);
        }
        return any;
    }

    // Only what Hive's metastore filter carries (Spark's HiveShim: integral, string and date
    // columns; a string holding both quote characters it refuses): a comparison on another type
    // is evaluated by Spark over every partition, in the session's time zone, where a partition's
    // own may differ.
    private static boolean pushable(org.apache.spark.sql.types.DataType type, String value) {
        if (type instanceof org.apache.spark.sql.types.IntegralType
                || type instanceof org.apache.spark.sql.types.DateType) {
            return true;
        }
        return type instanceof org.apache.spark.sql.types.StringType
            && !(value.indexOf('\'') >= 0 && value.indexOf('"') >= 0);
    }
}
