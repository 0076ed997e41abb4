// The Hive metastore service of pyspark's own jars (Hive 2.3), listening on one address only.
//
// Hive 2.3's `HiveMetaStore -p <port>` binds every interface (its bind-host setting arrived in
// Hive 3).  This launcher builds the same unsecured Thrift server that HiveMetaStore.startMetaStore
// builds (the retrying HMSHandler behind TSetIpAddressProcessor, binary protocol, a thread pool),
// on the address it is given.  The configuration (hive-site.xml) comes from the classpath.
//
// Before it serves, it creates the whole metastore schema in one thread.  With
// datanucleus.schema.autoCreateAll alone, DataNucleus creates each table the first time a request
// needs it, inside that request; on PostgreSQL that DDL waits for the locks of the other requests'
// open transactions while they wait for DataNucleus's schema lock: the service hangs.
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.jdo.PersistenceManager;
import org.datanucleus.PersistenceNucleusContext;
import org.datanucleus.api.jdo.JDOPersistenceManagerFactory;
import org.apache.hadoop.hive.metastore.ObjectStore;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hadoop.hive.metastore.HiveMetaStore;
import org.apache.hadoop.hive.metastore.TSetIpAddressProcessor;
import org.apache.hadoop.hive.metastore.api.ThriftHiveMetastore;
import org.apache.thrift.protocol.TBinaryProtocol;
import org.apache.thrift.server.TThreadPoolServer;
import org.apache.thrift.transport.TServerSocket;
import org.apache.thrift.transport.TTransportFactory;

public class LoopbackMetaStore {
    public static void main(String[] args) throws Throwable {
        String host = args.length > 0 ? args[0] : "127.0.0.1";
        int port = args.length > 1 ? Integer.parseInt(args[1]) : 9083;
        HiveConf conf = new HiveConf(HiveMetaStore.HMSHandler.class);
        createSchema(conf);
        ThriftHiveMetastore.Iface handler = HiveMetaStore.newRetryingHMSHandler("new db based metaserver", conf, false);
        TSetIpAddressProcessor<ThriftHiveMetastore.Iface> processor = new TSetIpAddressProcessor<>(handler);
        TServerSocket socket = new TServerSocket(new InetSocketAddress(host, port));
        TThreadPoolServer.Args server = new TThreadPoolServer.Args(socket)
            .processor(processor)
            .transportFactory(new TTransportFactory())
            .protocolFactory(new TBinaryProtocol.Factory())
            .minWorkerThreads(4)
            .maxWorkerThreads(64);
        System.err.println("Hive metastore listening on thrift://" + host + ":" + port);
        new TThreadPoolServer(server).serve();
    }

    /** Every persistent class of the metastore's package.jdo gets its tables now. */
    static void createSchema(HiveConf conf) throws Exception {
        List<String> classes = new ArrayList<>();
        try (InputStream jdo = ObjectStore.class.getClassLoader().getResourceAsStream("package.jdo")) {
            String text = new String(jdo.readAllBytes(), StandardCharsets.UTF_8);
            Matcher m = Pattern.compile("<class\\s+name=\"(\\w+)\"").matcher(text);
            while (m.find()) {
                classes.add("org.apache.hadoop.hive.metastore.model." + m.group(1));
            }
        }
        ObjectStore store = new ObjectStore();
        store.setConf(conf);
        PersistenceManager pm = store.getPersistenceManager();
        PersistenceNucleusContext context = ((JDOPersistenceManagerFactory) pm.getPersistenceManagerFactory()).getNucleusContext();
        context.getStoreManager().manageClasses(context.getClassLoaderResolver(null), classes.toArray(new String[0]));
        store.shutdown();
        System.err.println("Hive metastore schema: " + classes.size() + " persistent classes ready");
    }
}
