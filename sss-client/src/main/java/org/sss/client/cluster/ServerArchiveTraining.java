package org.sss.client.cluster;

import java.io.File;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;

/**
 * The main class of the JVM that makes the servers' class-data archive ({@link ServerClassArchive}).
 * It is the only class of a JAR of its own, and refers to nothing else by name: the JVM refuses
 * to write an archive when a directory of classes is on its class path, and a build's tests have
 * SSS's own classes in directories. So those directories are given here as an argument, loaded
 * by a loader of their own, and the archive keeps every class the training loads from a JAR
 * (Ratis, gRPC, Netty, RocksDB, protocol buffers: the bulk of a server's start).
 */
public final class ServerArchiveTraining {
  private ServerArchiveTraining() {}

  /** {@code ServerArchiveTraining DIRS}: DIRS the class path's directories, separated as in a class path. */
  public static void main(String[] args) throws Exception {
    List<URL> dirs = new ArrayList<>();
    for (String d : args.length > 0 ? args[0].split(File.pathSeparator) : new String[0]) {
      if (!d.isEmpty()) {
        dirs.add(new File(d).toURI().toURL());
      }
    }
    ClassLoader parent = ServerArchiveTraining.class.getClassLoader();
    ClassLoader loader = dirs.isEmpty() ? parent : new URLClassLoader(dirs.toArray(URL[]::new), parent);
    Thread.currentThread().setContextClassLoader(loader);
    Method train = Class.forName("org.sss.client.cluster.ServerClassArchive", true, loader)
        .getDeclaredMethod("train");
    train.setAccessible(true);
    try {
      train.invoke(null);
    } catch (InvocationTargetException e) {
      e.getCause().printStackTrace();
      System.exit(1); // at once: threads the cluster left must not keep a failed training alive
    }
    System.exit(0); // the archive is written as the JVM exits; threads left by the cluster must not hold it
  }
}
