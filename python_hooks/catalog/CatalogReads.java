package lakehouse;

// Reads of Spark's session catalog that cost py4j round trips per object when walked from Python
// (about six per partition): the partitions of many tables, answered in one call as one JSON
// document.  Compiled against the running Spark by Janino (catalog/jvm.py `compiled`).

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.hadoop.fs.Path;
import org.apache.spark.sql.catalyst.catalog.CatalogTablePartition;
import org.apache.spark.sql.catalyst.catalog.ExternalCatalog;
import org.apache.spark.sql.catalyst.catalog.SessionCatalog;

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
}
