package org.sss.client.cli;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import org.sss.client.SssClient;
import org.sss.client.cluster.SssCluster;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * Runs a user's job program, as {@code hadoop jar} does: loads the JAR in its own class
 * loader, points {@link SssClient#fromEnvironment()} at the cluster, makes every job the
 * program submits ship the JAR to the nodes (content-hashed, cached by the servers), and calls
 * the class's {@code main}.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
    description = "Run a job program: MAIN's main(args) with JOB.jar shipped to the nodes.")
final class RunCommand implements Callable<Integer> {
  @CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Option(names = "--jar", paramLabel = "JOB.jar", required = true, description = "the JAR with the job's classes")
  Path jar;

  @Option(names = "--class", paramLabel = "MAIN", required = true, description = "the class whose main(String[]) to run")
  String mainClass;

  @Parameters(paramLabel = "ARGS", arity = "0..*", description = "arguments for MAIN")
  List<String> args = List.of();

  @Override
  public Integer call() throws Exception {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalArgumentException("no such JAR: " + jar);
    }
    ClusterOptions options = SssCommand.clusterOf(spec);
    try (SssCluster cluster = options.open()) {
      Path clusterFile = options.clusterFile;
      Path temp = null;
      if (clusterFile == null) {
        temp = Files.createTempFile("sss-embedded-", ".properties");
        cluster.spec().save(temp);
        clusterFile = temp;
      }
      System.setProperty(SssClient.CLUSTER_PROPERTY, clusterFile.toAbsolutePath().toString());
      System.setProperty("sss.job.jar", jar.toAbsolutePath().toString());
      ClassLoader previous = Thread.currentThread().getContextClassLoader();
      try (URLClassLoader loader = new URLClassLoader("job", new URL[] {jar.toUri().toURL()},
          RunCommand.class.getClassLoader())) {
        Thread.currentThread().setContextClassLoader(loader);
        Class<?> main;
        try {
          main = Class.forName(mainClass, true, loader);
        } catch (ClassNotFoundException e) {
          throw new IllegalArgumentException("class " + mainClass + " is not in " + jar);
        }
        Method m = main.getMethod("main", String[].class);
        if (!Modifier.isStatic(m.getModifiers())) {
          throw new IllegalArgumentException(mainClass + ".main is not static");
        }
        m.invoke(null, (Object) args.toArray(new String[0]));
      } catch (InvocationTargetException e) {
        throw e.getCause() instanceof Exception ex ? ex : e;
      } finally {
        Thread.currentThread().setContextClassLoader(previous);
        System.clearProperty(SssClient.CLUSTER_PROPERTY);
        System.clearProperty("sss.job.jar");
        if (temp != null) {
          Files.deleteIfExists(temp);
        }
      }
    }
    return 0;
  }
}
