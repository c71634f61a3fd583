package org.sss.client.internal;

import java.io.File;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.sss.core.cluster.ClusterSpec;

/**
 * The clusters whose nodes run inside this JVM, known by their secrets (random for each
 * embedded cluster). Their nodes load user classes through this JVM's class path, so a job
 * whose JAR is on it needs no JAR shipped: hashing and sending it (0.15 s for a 400 KB JAR in a
 * fresh JVM, where SHA-256 runs interpreted) would only give the nodes a class loader that
 * finds every class in its parent, the same class path, first.
 */
public final class InProcessClusters {
  private static final Set<String> SECRETS = ConcurrentHashMap.newKeySet();

  private InProcessClusters() {}

  /** Called when an embedded cluster has started; {@link #remove} when it closes. */
  public static void add(ClusterSpec spec) {
    if (!spec.secret().isEmpty()) {
      SECRETS.add(spec.secret());
    }
  }

  public static void remove(ClusterSpec spec) {
    SECRETS.remove(spec.secret());
  }

  /** Whether the nodes of {@code spec} run in this JVM and see {@code jar} on its class path. */
  public static boolean seeOnClassPath(ClusterSpec spec, Path jar) {
    if (spec.secret().isEmpty() || !SECRETS.contains(spec.secret())) {
      return false;
    }
    Path wanted = jar.toAbsolutePath().normalize();
    for (String entry : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
      if (!entry.isEmpty() && Path.of(entry).toAbsolutePath().normalize().equals(wanted)) {
        return true;
      }
    }
    return false;
  }
}
