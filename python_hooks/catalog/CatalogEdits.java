package lakehouse;

// Edits of Spark's CatalogTable that Scala writes as `table.copy(properties = ...)`.  A Scala case
// class's named copy is not callable from Python, so this calls `copy` with every field named by
// its accessor: compiled against the running Spark by Janino (catalog/jvm.py `compiled`), a
// CatalogTable whose fields differ from Spark 3.5's fails to compile, with the compiler's message,
// instead of having a value written into the wrong field.

import org.apache.spark.sql.catalyst.TableIdentifier;
import org.apache.spark.sql.catalyst.catalog.CatalogStorageFormat;
import org.apache.spark.sql.catalyst.catalog.CatalogTable;
import org.apache.spark.sql.catalyst.catalog.CatalogTableType;

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

    // The table `create table <target> like <source> location '...' tblproperties (...)` makes
    // (Spark's CreateTableLikeCommand): an external table of the source's schema, storage format
    // (at `storage`'s location), provider, partition columns and buckets, with only the given
    // properties, every other field as a new CatalogTable has it.
    public CatalogTable likeAt(
            CatalogTable source,
            TableIdentifier target,
            CatalogStorageFormat storage,
            scala.collection.immutable.Map properties) {
        scala.Option nothing = scala.None$.MODULE$;
        return source.copy(
            target,
            CatalogTableType.EXTERNAL(),
            storage,
            source.schema(),
            source.provider(),
            source.partitionColumnNames(),
            source.bucketSpec(),
            "",
            System.currentTimeMillis(),
            -1L,
            "",
            properties,
            nothing,
            nothing,
            nothing,
            scala.collection.immutable.Nil$.MODULE$,
            source.tracksPartitionsInCatalog(),
            true,
            scala.collection.immutable.Map$.MODULE$.empty(),
            nothing);
    }
}
