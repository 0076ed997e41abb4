package lakehouse;

// Edits of Spark's CatalogTable that Scala writes as `table.copy(properties = ...)`.  A Scala case
// class's named copy is not callable from Python, so this calls `copy` with every field named by
// its accessor: compiled against the running Spark by Janino (catalog/jvm.py `compiled`), a
// CatalogTable whose fields differ from Spark 3.5's fails to compile, with the compiler's message,
// instead of having a value written into the wrong field.

import org.apache.spark.sql.catalyst.catalog.CatalogTable;

public class CatalogEdits {

    public CatalogTable withProperties(CatalogTable t, scala.collection.immutable.Map properties) {
        return t.copy(
            t.identifier(),
            t.tableType(),
            t.storage(),
            t.schema(),
            t.provider(),
            t.partitionColumnNames(),
            t.bucketSpec(),
            t.owner(),
            t.createTime(),
            t.lastAccessTime(),
            t.createVersion(),
            properties,
            t.stats(),
            t.viewText(),
            t.comment(),
            t.unsupportedFeatures(),
            t.tracksPartitionsInCatalog(),
            t.schemaPreservesCase(),
            t.ignoredProperties(),
            t.viewOriginalText());
    }
}
