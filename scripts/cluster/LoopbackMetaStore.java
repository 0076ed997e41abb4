// The Hive metastore service of pyspark's own jars (Hive 2.3), listening on one address only.
//
// Hive 2.3's `HiveMetaStore -p <port>` binds every interface (its bind-host setting arrived in
// Hive 3).  This launcher builds the same unsecured Thrift server that HiveMetaStore.startMetaStore
// builds (the retrying HMSHandler behind TSetIpAddressProcessor, binary protocol, a thread pool),
// on the address it is given.  The configuration (hive-site.xml) comes from the classpath.
//
// The database's schema is Hive's own, made by Hive's schematool before the service starts
// (scripts/cluster/up.sh): the service neither creates nor alters a table of it.
import java.net.InetSocketAddress;
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
}
