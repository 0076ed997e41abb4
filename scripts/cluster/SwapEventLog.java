// A metastore event listener (hive.metastore.event.listeners) that writes one line per table or
// partition change to $cluster.log.dir/metastore-events.log: the same events, from the same hook,
// that Hive's DbNotificationListener turns into the notification log that Impala's event
// processor, Hive replication and other engines' caches follow.  It shows which events a purge's
// location swap produces (docs/deploy.md), without hive-hcatalog-core, which pyspark does not ship.
import java.io.FileWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Instant;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hive.metastore.MetaStoreEventListener;
import org.apache.hadoop.hive.metastore.api.MetaException;
import org.apache.hadoop.hive.metastore.api.Partition;
import org.apache.hadoop.hive.metastore.api.Table;
import org.apache.hadoop.hive.metastore.events.AddPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterPartitionEvent;
import org.apache.hadoop.hive.metastore.events.AlterTableEvent;
import org.apache.hadoop.hive.metastore.events.CreateTableEvent;
import org.apache.hadoop.hive.metastore.events.DropTableEvent;

public class SwapEventLog extends MetaStoreEventListener {
    private final String path;

    public SwapEventLog(Configuration conf) {
        super(conf);
        path = System.getProperty("cluster.log.dir", ".") + "/metastore-events.log";
    }

    private synchronized void write(String kind, String db, String table, String detail) {
        try (PrintWriter out = new PrintWriter(new FileWriter(path, true))) {
            out.println(Instant.now() + "\t" + kind + "\t" + db + "." + table + "\t" + detail);
        } catch (IOException e) {
            // the event log is evidence, not a dependency: never fail a metastore call for it
        }
    }

    private static String location(Table t) {
        return t.getSd() == null ? "" : String.valueOf(t.getSd().getLocation());
    }

    private static String location(Partition p) {
        return p.getSd() == null ? "" : String.valueOf(p.getSd().getLocation());
    }

    @Override
    public void onAlterPartition(AlterPartitionEvent e) throws MetaException {
        if (!e.getStatus()) return;
        Partition before = e.getOldPartition(), after = e.getNewPartition();
        write("ALTER_PARTITION", after.getDbName(), after.getTableName(),
              String.join("/", after.getValues()) + "\t" + location(before) + "\t" + location(after));
    }

    @Override
    public void onAlterTable(AlterTableEvent e) throws MetaException {
        if (!e.getStatus()) return;
        Table before = e.getOldTable(), after = e.getNewTable();
        write("ALTER_TABLE", after.getDbName(), after.getTableName(), "\t" + location(before) + "\t" + location(after));
    }

    @Override
    public void onAddPartition(AddPartitionEvent e) throws MetaException {
        if (!e.getStatus()) return;
        java.util.Iterator<Partition> it = e.getPartitionIterator();
        while (it.hasNext()) {
            Partition p = it.next();
            write("ADD_PARTITION", p.getDbName(), p.getTableName(), String.join("/", p.getValues()) + "\t\t" + location(p));
        }
    }

    @Override
    public void onCreateTable(CreateTableEvent e) throws MetaException {
        if (!e.getStatus()) return;
        write("CREATE_TABLE", e.getTable().getDbName(), e.getTable().getTableName(), "\t\t" + location(e.getTable()));
    }

    @Override
    public void onDropTable(DropTableEvent e) throws MetaException {
        if (!e.getStatus()) return;
        write("DROP_TABLE", e.getTable().getDbName(), e.getTable().getTableName(), "\t" + location(e.getTable()) + "\t");
    }
}
