package lakehouse;

// The facts of many data files in one call from Python: their listing (path, size, modification
// time) and their footers (rows, and the statistics of one column per row group or stripe),
// through the session's Hadoop FileSystem and the parquet and ORC readers Spark ships, so the
// same code serves local disk, HDFS and object stores.  Compiled in the driver's JVM by Janino
// (which Spark ships for its own code generation) from this source: see file_facts.py.
//
// Written for Janino: no generics, lambdas or diamonds; raw collections with casts.  Every call
// returns one JSON document (a string): a py4j round trip per call, not per file.
//
// An instance (`fresh()`, one per FileFacts of Python) remembers the statuses it listed, so that
// a footer of a listed file is read without asking the store for its length again (on S3A: no
// HEAD, and the parquet tail in one GET), and the trees `trees` listed, which answer `list` and
// `samples` under them from memory (on S3A one paged listing per table instead of two or three
// requests per directory).

import java.io.ByteArrayInputStream;
import java.io.FileNotFoundException;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FSDataInputStream;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RemoteIterator;
import org.apache.orc.ColumnStatistics;
import org.apache.orc.IntegerColumnStatistics;
import org.apache.orc.OrcFile;
import org.apache.orc.Reader;
import org.apache.orc.TypeDescription;
import org.apache.parquet.column.statistics.Statistics;
import org.apache.parquet.format.converter.ParquetMetadataConverter;
import org.apache.parquet.hadoop.ParquetFileReader;
import org.apache.parquet.hadoop.metadata.BlockMetaData;
import org.apache.parquet.hadoop.metadata.ColumnChunkMetaData;
import org.apache.parquet.hadoop.metadata.ParquetMetadata;
import org.apache.parquet.hadoop.util.HadoopInputFile;
import org.apache.parquet.schema.PrimitiveType;

public class FileFacts {

    // every file this instance listed, by its path as listed: its status opens it without a probe
    private final Map statuses = Collections.synchronizedMap(new HashMap());
    // the trees `trees` listed, by their qualified root: {directory: [its files and directories]}
    private final Map trees = Collections.synchronizedMap(new HashMap());

    // An instance of its own for one user (this class's shared instance is compiled code only).
    public FileFacts fresh() {
        return new FileFacts();
    }

    static String quote(String text) {
        if (text == null) return "null";
        StringBuilder out = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c == '"' || c == '\\') {
                out.append('\\').append(c);
            } else if (c < 0x20) {
                String hex = Integer.toHexString(c);
                out.append("\\u");
                for (int k = hex.length(); k < 4; k++) out.append('0');
                out.append(hex);
            } else {
                out.append(c);
            }
        }
        return out.append('"').toString();
    }

    // Spark 3.5's rule for the names under a location it reads: HadoopFSUtils
    // .shouldFilterOutPathName leaves out names starting with `.`, names starting with `_` that
    // hold no `=` (except `_metadata*` and `_common_metadata*`) and names ending with
    // `._COPYING_` (a copy in progress); of what is left, PartitioningAwareFileIndex reads no
    // file starting with `_` without `=` as data (`_metadata`, `_common_metadata`).  A directory
    // `_k=v` is read, and so is a file `_k=v.parquet`.  The location's own name plays no part.
    static boolean hidden(String name, boolean directory) {
        if (name.startsWith(".") || name.endsWith("._COPYING_")) return true;
        if (name.startsWith("_") && name.indexOf('=') < 0) {
            return !directory || !(name.startsWith("_metadata") || name.startsWith("_common_metadata"));
        }
        return false;
    }

    // ---- listing ---------------------------------------------------------------------------

    // Lists one location: its data files (recursively when `recursive`), or, not recursively,
    // notes a sub-directory (Spark does not read those in a Hive partition).
    String listOne(Configuration conf, String location, boolean recursive, String exclude) throws Exception {
        Path root = new Path(location);
        FileSystem fs = root.getFileSystem(conf);
        StringBuilder out = new StringBuilder();
        out.append("{\"location\":").append(quote(location));
        if (!exists(fs, root)) {
            return out.append(",\"exists\":false,\"files\":[],\"subdirectories\":false}").toString();
        }
        String skip = exclude == null ? null : fs.makeQualified(new Path(exclude)).toString();
        List pending = new ArrayList();
        pending.add(root);
        boolean subdirectories = false;
        StringBuilder listed = new StringBuilder();
        int count = 0;
        while (!pending.isEmpty()) {
            Path directory = (Path) pending.remove(pending.size() - 1);
            FileStatus[] children = children(fs, directory);
            for (int i = 0; i < children.length; i++) {
                FileStatus child = children[i];
                String name = child.getPath().getName();
                if (hidden(name, child.isDirectory())) continue;
                String path = child.getPath().toString();
                if (skip != null && path.equals(skip)) continue;
                if (child.isDirectory()) {
                    if (recursive) pending.add(child.getPath());
                    else subdirectories = true;
                    continue;
                }
                if (count++ > 0) listed.append(',');
                String version = version(child);
                listed.append('[').append(quote(path)).append(',').append(child.getLen()).append(',')
                      .append(child.getModificationTime()).append(',')
                      .append(version == null ? "null" : quote(version)).append(']');
            }
        }
        return out.append(",\"exists\":true,\"subdirectories\":").append(subdirectories)
                  .append(",\"files\":[").append(listed).append("]}").toString();
    }

    // What tells two writes of one file apart where its size and modification time may not:
    // an object store's entity tag (other bytes under the key, another tag, even within the
    // second its Last-Modified keeps: S3A's and ABFS's statuses carry it), HDFS's file id (a file
    // replaced under its name is a new file, whatever times are put back).  null where the
    // status has neither (the local disk; viewfs:// and other wrapping filesystems).  Both are
    // looked up by name: EtagSource is Hadoop 3.3.2's, and an older client must still list.
    static final Class ETAG_SOURCE = load("org.apache.hadoop.fs.EtagSource");
    static final Method GET_ETAG = method(ETAG_SOURCE, "getEtag");
    static final Class HDFS_STATUS = load("org.apache.hadoop.hdfs.protocol.HdfsFileStatus");
    static final Method GET_FILE_ID = method(HDFS_STATUS, "getFileId");

    static Class load(String name) {
        try {
            return Class.forName(name, false, FileSystem.class.getClassLoader());
        } catch (Throwable missing) {
            return null;
        }
    }

    static Method method(Class type, String name) {
        try {
            return type == null ? null : type.getMethod(name, new Class[0]);
        } catch (Throwable missing) {
            return null;
        }
    }

    static String version(FileStatus status) throws Exception {
        if (GET_ETAG != null && ETAG_SOURCE.isInstance(status)) {
            Object tag = GET_ETAG.invoke(status, new Object[0]);
            if (tag != null && tag.toString().length() > 0) return "etag:" + tag;
        }
        if (GET_FILE_ID != null && HDFS_STATUS.isInstance(status)) {
            return "id:" + GET_FILE_ID.invoke(status, new Object[0]);
        }
        return null;
    }

    public String list(final Configuration conf, String[] locations, final boolean recursive,
                       final String exclude, int threads) throws Exception {
        List tasks = new ArrayList();
        for (int i = 0; i < locations.length; i++) {
            final String location = locations[i];
            tasks.add(new Callable() {
                public Object call() throws Exception {
                    try {
                        return listOne(conf, location, recursive, exclude);
                    } catch (Exception e) {
                        return "{\"location\":" + quote(location) + ",\"error\":" + quote(String.valueOf(e)) + "}";
                    }
                }
            });
        }
        return "[" + runAll(tasks, threads) + "]";
    }

    // Up to `limit` data files under a table directory, `depth` partition levels down
    // (`col=value` directories, picked in random order, at most `perDirectory` files from each,
    // at every level: from each day of a `ds/hr` table too),
    // without asking the metastore.
    String sample(Configuration conf, String location, int depth, int limit, int perDirectory,
                  long seed) throws Exception {
        Path root = new Path(location);
        FileSystem fs = root.getFileSystem(conf);
        java.util.Random random = new java.util.Random(seed);
        List found = new ArrayList();
        if (exists(fs, root)) visit(fs, root, 0, depth, limit, perDirectory, random, found);
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < found.size(); i++) {
            if (i > 0) out.append(',');
            out.append(quote((String) found.get(i)));
        }
        return out.append(']').toString();
    }

    // `sample` of many table directories at once, on a pool: one JSON array of arrays, in the
    // locations' order (an unreadable location gives an empty sample: its table is read whole).
    public String samples(final Configuration conf, String[] locations, final int[] depths, final int limit,
                          final int perDirectory, final long[] seeds, int threads) throws Exception {
        List tasks = new ArrayList();
        for (int i = 0; i < locations.length; i++) {
            final String location = locations[i];
            final int depth = depths[i];
            final long seed = seeds[i];
            tasks.add(new Callable() {
                public Object call() throws Exception {
                    try {
                        return sample(conf, location, depth, limit, perDirectory, seed);
                    } catch (Exception e) {
                        return "[]";
                    }
                }
            });
        }
        return "[" + runAll(tasks, threads) + "]";
    }

    void visit(FileSystem fs, Path directory, int level, int depth, int limit, int perDirectory,
               java.util.Random random, List found) throws Exception {
        FileStatus[] children = children(fs, directory);
        if (level == depth) {
            int taken = 0;
            for (int i = 0; i < children.length && found.size() < limit && taken < perDirectory; i++) {
                if (!children[i].isDirectory() && !hidden(children[i].getPath().getName(), false) && children[i].getLen() > 0) {
                    found.add(children[i].getPath().toString());
                    taken++;
                }
            }
            return;
        }
        List directories = new ArrayList();
        for (int i = 0; i < children.length; i++) {
            String name = children[i].getPath().getName();
            if (children[i].isDirectory() && !hidden(name, true) && name.indexOf('=') > 0) directories.add(children[i].getPath());
        }
        java.util.Collections.shuffle(directories, random);
        for (int i = 0; i < directories.size() && found.size() < limit; i++) {
            // every partition directory, at every level (a day of `ds/hr`), gives at most perDirectory
            visit(fs, (Path) directories.get(i), level + 1, depth, Math.min(limit, found.size() + perDirectory),
                  perDirectory, random, found);
        }
    }

    // ---- trees -----------------------------------------------------------------------------

    // Lists every file under each root and keeps it: `list` and `samples` of a location under a
    // kept root read it instead of the store.  A `flat` root (an object store) is one recursive
    // `listFiles`, a paged listing of its prefix; another is walked directory by directory with
    // `listStatus`, as the store's own listings are (the local disk's `listFiles` would start a
    // process per file for its owner, HDFS's would fetch every block's locations).  A directory
    // is known by the files under it, so an empty one is as a missing one.  [error or null] per root.
    public String trees(final Configuration conf, String[] roots, final boolean[] flat, int threads) throws Exception {
        List tasks = new ArrayList();
        for (int i = 0; i < roots.length; i++) {
            final String location = roots[i];
            final boolean whole = flat[i];
            tasks.add(new Callable() {
                public Object call() throws Exception {
                    try {
                        tree(conf, location, whole);
                        return "null";
                    } catch (Exception e) {
                        return quote(location + ": " + e);
                    }
                }
            });
        }
        return "[" + runAll(tasks, threads) + "]";
    }

    void tree(Configuration conf, String location, boolean flat) throws Exception {
        Path root = new Path(location);
        FileSystem fs = root.getFileSystem(conf);
        String key = fs.makeQualified(root).toString();
        Map children = new HashMap();
        try {
            List files = filesUnder(fs, root, flat);
            children.put(key, new ArrayList());  // the root exists
            for (int i = 0; i < files.size(); i++) {
                FileStatus file = (FileStatus) files.get(i);
                statuses.put(file.getPath().toString(), file);
                place(children, key, file);
            }
        } catch (FileNotFoundException e) {
            children.clear();  // no root: nothing under it
        }
        trees.put(key, children);
    }

    // Every file under a directory: one recursive listing when `flat`, else directory by directory.
    static List filesUnder(FileSystem fs, Path root, boolean flat) throws Exception {
        List found = new ArrayList();
        if (flat) {
            RemoteIterator files = fs.listFiles(root, true);
            while (files.hasNext()) found.add(files.next());
            return found;
        }
        List pending = new ArrayList();
        pending.add(root);
        while (!pending.isEmpty()) {
            FileStatus[] children = fs.listStatus((Path) pending.remove(pending.size() - 1));
            for (int i = 0; i < children.length; i++) {
                if (children[i].isDirectory()) pending.add(children[i].getPath());
                else found.add(children[i]);
            }
        }
        return found;
    }

    // Adds a file to its directory's children, and each directory not seen yet to its parent's,
    // up to the root.  A file named outside the root (another spelling of its scheme or host)
    // fails the whole tree, which is then not kept: its locations are read from the store.
    static void place(Map children, String root, FileStatus file) {
        if (!file.getPath().toString().startsWith(root + "/")) {
            throw new IllegalStateException("listed " + file.getPath() + " outside " + root);
        }
        FileStatus entry = file;
        Path parent = file.getPath().getParent();
        while (parent != null && parent.toString().length() >= root.length()) {
            String key = parent.toString();
            List known = (List) children.get(key);
            boolean seen = known != null;
            if (!seen) {
                known = new ArrayList();
                children.put(key, known);
            }
            known.add(entry);
            if (seen || key.equals(root)) return;
            entry = new FileStatus(0, true, 0, 0, 0, parent);
            parent = parent.getParent();
        }
    }

    // The kept tree holding `directory`, or null.
    Map treeOf(Path directory) {
        for (Path at = directory; at != null; at = at.getParent()) {
            Map tree = (Map) trees.get(at.toString());
            if (tree != null) return tree;
        }
        return null;
    }

    boolean exists(FileSystem fs, Path directory) throws Exception {
        Path qualified = fs.makeQualified(directory);
        Map tree = treeOf(qualified);
        return tree == null ? fs.exists(directory) : tree.containsKey(qualified.toString());
    }

    // A directory's files and directories, from a kept tree or from the store.
    FileStatus[] children(FileSystem fs, Path directory) throws Exception {
        Path qualified = fs.makeQualified(directory);
        Map tree = treeOf(qualified);
        if (tree != null) {
            List known = (List) tree.get(qualified.toString());
            return known == null ? new FileStatus[0] : (FileStatus[]) known.toArray(new FileStatus[known.size()]);
        }
        FileStatus[] listed = fs.listStatus(directory);
        for (int i = 0; i < listed.length; i++) {
            if (!listed[i].isDirectory()) statuses.put(listed[i].getPath().toString(), listed[i]);
        }
        return listed;
    }

    // ---- footers ---------------------------------------------------------------------------

    // the end of a parquet file read in one request: the footer of a file of a few row groups
    // and columns is well under it (a larger one is read by parquet-mr's own reader)
    static final int TAIL = 64 * 1024;

    // The footer of a listed parquet file from one read of its last TAIL bytes, or null (not
    // listed, an encrypted footer, a footer larger than the tail).
    ParquetMetadata tail(Configuration conf, String location) throws Exception {
        FileStatus status = (FileStatus) statuses.get(location);
        if (status == null || status.getLen() < 12) return null;
        long length = status.getLen();
        int size = (int) Math.min(length, TAIL);
        byte[] buffer = new byte[size];
        // opened with its listed status: S3A then skips its HEAD
        FSDataInputStream in = (FSDataInputStream) status.getPath().getFileSystem(conf).openFile(status.getPath())
            .withFileStatus(status).build().get();
        try {
            in.readFully(length - size, buffer);
        } finally {
            in.close();
        }
        if (buffer[size - 4] != 'P' || buffer[size - 3] != 'A' || buffer[size - 2] != 'R' || buffer[size - 1] != '1') {
            return null;
        }
        long footer = (buffer[size - 8] & 0xffL) | (buffer[size - 7] & 0xffL) << 8
                      | (buffer[size - 6] & 0xffL) << 16 | (buffer[size - 5] & 0xffL) << 24;
        if (footer + 8 > size) return null;
        return new ParquetMetadataConverter().readParquetMetadata(
            new ByteArrayInputStream(buffer, (int) (size - 8 - footer), (int) footer), ParquetMetadataConverter.NO_FILTER);
    }

    ParquetMetadata footerOf(Configuration conf, String location) throws Exception {
        ParquetMetadata found = tail(conf, location);
        if (found != null) return found;
        ParquetFileReader reader = ParquetFileReader.open(HadoopInputFile.fromPath(new Path(location), conf));
        try {
            return reader.getFooter();
        } finally {
            reader.close();
        }
    }

    // One parquet file: rows, and per row group its rows and the column's statistics
    // [rows, nulls or -1, min or null, max or null, has statistics]; the column's physical and
    // logical type; `matches` how many columns equal the path ignoring case.
    String parquet(Configuration conf, String location, String column) throws Exception {
        List blocks = footerOf(conf, location).getBlocks();
        long rows = 0;
        for (int b = 0; b < blocks.size(); b++) rows += ((BlockMetaData) blocks.get(b)).getRowCount();
        StringBuilder out = new StringBuilder();
        out.append("{\"path\":").append(quote(location)).append(",\"rows\":").append(rows);
        if (column == null) return out.append('}').toString();
        StringBuilder groups = new StringBuilder();
        int matches = -1;
        String type = null;
        for (int b = 0; b < blocks.size(); b++) {
            BlockMetaData block = (BlockMetaData) blocks.get(b);
            List columns = block.getColumns();
            ColumnChunkMetaData chunk = null;
            int found = 0;
            for (int c = 0; c < columns.size(); c++) {
                ColumnChunkMetaData candidate = (ColumnChunkMetaData) columns.get(c);
                if (candidate.getPath().toDotString().equalsIgnoreCase(column)) {
                    found++;
                    chunk = candidate;
                }
            }
            matches = found;
            if (b > 0) groups.append(',');
            groups.append('[').append(block.getRowCount()).append(',');
            if (found != 1) {
                groups.append("-1,null,null,false]");
                continue;
            }
            PrimitiveType primitive = chunk.getPrimitiveType();
            type = primitive.getPrimitiveTypeName().name() + ":" + String.valueOf(primitive.getLogicalTypeAnnotation());
            Statistics stats = chunk.getStatistics();
            if (stats == null || stats.isEmpty()) {
                groups.append("-1,null,null,false]");
            } else if (!stats.hasNonNullValue()) {
                groups.append(stats.getNumNulls()).append(",null,null,true]");
            } else {
                groups.append(stats.getNumNulls()).append(',').append(quote(String.valueOf(stats.genericGetMin())))
                      .append(',').append(quote(String.valueOf(stats.genericGetMax()))).append(",true]");
            }
        }
        return out.append(",\"matches\":").append(matches).append(",\"type\":").append(quote(type))
                  .append(",\"groups\":[").append(groups).append("]}").toString();
    }

    // One ORC file: rows, and the column's file statistics as one group.
    String orc(Configuration conf, String location, String column) throws Exception {
        Path path = new Path(location);
        OrcFile.ReaderOptions options = OrcFile.readerOptions(conf).filesystem(path.getFileSystem(conf));
        FileStatus status = (FileStatus) statuses.get(location);
        if (status != null) options = options.maxLength(status.getLen());  // no probe for the length
        Reader reader = OrcFile.createReader(path, options);
        try {
            StringBuilder out = new StringBuilder();
            long rows = reader.getNumberOfRows();
            out.append("{\"path\":").append(quote(location)).append(",\"rows\":").append(rows);
            if (column == null) return out.append('}').toString();
            TypeDescription subtype = null;
            try {
                subtype = reader.getSchema().findSubtype(column);
            } catch (Exception e) {
                subtype = null;  // a name the file does not have (Hive's _colN)
            }
            if (subtype == null) {
                return out.append(",\"matches\":0,\"type\":null,\"groups\":[[").append(rows).append(",-1,null,null,false]]}").toString();
            }
            ColumnStatistics stats = reader.getStatistics()[subtype.getId()];
            out.append(",\"matches\":1,\"type\":").append(quote("ORC:" + subtype.getCategory().name()));
            long values = stats.getNumberOfValues();
            String nulls = stats.hasNull() ? String.valueOf(rows - values) : "0";
            if (values == 0) {
                return out.append(",\"groups\":[[").append(rows).append(',').append(nulls).append(",null,null,true]]}").toString();
            }
            if (stats instanceof IntegerColumnStatistics) {
                IntegerColumnStatistics ints = (IntegerColumnStatistics) stats;
                return out.append(",\"groups\":[[").append(rows).append(',').append(nulls).append(',')
                          .append(quote(String.valueOf(ints.getMinimum()))).append(',')
                          .append(quote(String.valueOf(ints.getMaximum()))).append(",true]]}").toString();
            }
            return out.append(",\"groups\":[[").append(rows).append(",-1,null,null,false]]}").toString();
        } finally {
            reader.close();
        }
    }

    public String footers(final Configuration conf, String[] paths, final String format, final String column,
                          int threads) throws Exception {
        List tasks = new ArrayList();
        for (int i = 0; i < paths.length; i++) {
            final String location = paths[i];
            tasks.add(new Callable() {
                public Object call() throws Exception {
                    try {
                        return "orc".equals(format) ? orc(conf, location, column) : parquet(conf, location, column);
                    } catch (Exception e) {
                        return "{\"path\":" + quote(location) + ",\"error\":" + quote(String.valueOf(e)) + "}";
                    }
                }
            });
        }
        return "[" + runAll(tasks, threads) + "]";
    }

    // ---- copies ----------------------------------------------------------------------------

    // Copies each file byte for byte into its directory (made first), keeping its name; returns
    // one element per file: null, or the error.
    public String copy(final Configuration conf, String[] sources, String[] directories, int threads) throws Exception {
        List tasks = new ArrayList();
        for (int i = 0; i < sources.length; i++) {
            final Path source = new Path(sources[i]);
            final Path directory = new Path(directories[i]);
            tasks.add(new Callable() {
                public Object call() throws Exception {
                    try {
                        FileSystem target = directory.getFileSystem(conf);
                        target.mkdirs(directory);
                        Path copy = new Path(directory, source.getName());
                        if (!org.apache.hadoop.fs.FileUtil.copy(source.getFileSystem(conf), source, target, copy, false, false, conf)) {
                            return quote(source + ": the copy returned false");
                        }
                        return "null";
                    } catch (Exception e) {
                        return quote(source + ": " + e);
                    }
                }
            });
        }
        return "[" + runAll(tasks, threads) + "]";
    }

    // ---- the pool of one call --------------------------------------------------------------

    // Runs the tasks on a pool made for this call and shut down before it returns: nothing of a
    // call outlives it.  Results joined with commas, in the tasks' order.
    static String runAll(List tasks, int threads) throws Exception {
        StringBuilder out = new StringBuilder();
        if (tasks.size() <= 1 || threads <= 1) {
            for (int i = 0; i < tasks.size(); i++) {
                if (i > 0) out.append(',');
                out.append((String) ((Callable) tasks.get(i)).call());
            }
            return out.toString();
        }
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(threads, tasks.size()));
        try {
            List futures = new ArrayList();
            for (int i = 0; i < tasks.size(); i++) futures.add(pool.submit((Callable) tasks.get(i)));
            for (int i = 0; i < futures.size(); i++) {
                if (i > 0) out.append(',');
                out.append((String) ((Future) futures.get(i)).get());
            }
            return out.toString();
        } finally {
            pool.shutdownNow();
        }
    }
}
