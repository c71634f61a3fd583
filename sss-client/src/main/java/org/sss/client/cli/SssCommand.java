package org.sss.client.cli;

import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Arrays;
import java.util.List;
import java.util.ServiceLoader;
import java.util.function.Predicate;
import org.sss.core.proto.ErrorCode;
import org.sss.core.transport.ClientTransport;
import org.sss.core.transport.SssException;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The {@code sss} command line. Every subcommand runs against {@code --cluster FILE} or, without
 * it, against an embedded cluster started for the command, except the data commands, which then
 * refuse (their data would end with the command). A failure prints one line on stderr and exits
 * with status 1 (2 for a usage error).
 */
@Command(name = "sss", mixinStandardHelpOptions = true, version = "sss 0.1.0",
    description = "SSS: a MapReduce engine on a sharded key-value store.")
public final class SssCommand implements Runnable {
  /**
   * The built-in commands, in the order {@code --help} lists them (the extensions' follow).
   * Added to the command line by {@link #commandLine(String...)}, not by the annotation, so
   * that a run builds the model of the one command it runs.
   */
  private static final List<Class<?>> BUILT_IN = List.of(
      ClusterCommand.class, NodeCommand.class, ServerCommand.class, TableCommand.class, PutCommand.class,
      GetCommand.class, ScanCommand.class, CountCommand.class, LoadCommand.class, DumpCommand.class,
      RunCommand.class, PingCommand.class, CommandLine.HelpCommand.class);

  /** Options of this command that take a value (as the next argument or after {@code =}). */
  private static final List<String> OPTIONS_WITH_VALUES = List.of("--cluster", "--nodes");

  @Mixin
  ClusterOptions cluster;

  @picocli.CommandLine.Spec
  CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(spec.commandLine(), "missing command (see sss --help)");
  }

  /** The cluster options of the root command, for subcommands (also those of extensions). */
  public static ClusterOptions clusterOf(CommandLine.Model.CommandSpec spec) {
    return ((SssCommand) spec.root().userObject()).cluster;
  }

  /**
   * Refuses {@code sss --cluster FILE} before a command to which a cluster file means nothing
   * (it would be ignored without a word); {@code why} says where the command's cluster comes from.
   */
  static void refuseClusterFile(CommandLine.Model.CommandSpec spec, String why) {
    if (clusterOf(spec).clusterFile != null) {
      throw new CommandLine.ParameterException(spec.commandLine(), "--cluster means nothing to "
          + spec.qualifiedName(" ").replaceFirst("^sss ", "") + ": " + why);
    }
  }

  /** Commands to which {@code --cluster} means nothing: they do not list it, nor take it. */
  private static final List<List<String>> WITHOUT_CLUSTER_FILE = List.of(
      List.of("server"), List.of("cluster"), List.of("cluster", "start"),
      List.of("cluster", "stop"), List.of("cluster", "resize"));

  /** A file error in words: the JDK's message for most of them is the bare path. */
  static String describe(FileSystemException e) {
    String what = e instanceof NoSuchFileException ? "no such file or directory"
        : e instanceof AccessDeniedException ? "permission denied"
        : e instanceof FileAlreadyExistsException ? "exists already (or is not a directory)"
        : e instanceof NotDirectoryException ? "not a directory"
        : e.getReason() != null ? e.getReason() : e.getClass().getSimpleName();
    return what + ": " + e.getFile() + (e.getOtherFile() != null ? " -> " + e.getOtherFile() : "");
  }

  /** Whether {@code e} or one of its causes is what {@code test} looks for. */
  private static boolean causedBy(Throwable e, Predicate<Throwable> test) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (test.test(t)) {
        return true;
      }
    }
    return false;
  }

  /** True for a job that failed in user code (a mapper, reducer, ... threw): its message holds their trace. */
  private static boolean userCodeFailed(Throwable e) {
    return causedBy(e, t -> t instanceof SssException s && s.code() == ErrorCode.USER_CODE_FAILED);
  }

  /** Builds the command line with every command, those of the extensions found on the class path too. */
  public static CommandLine commandLine() {
    return commandLine(new String[0]);
  }

  /**
   * The command line for {@code args}: with only the command they name when they name one
   * (picocli reads every annotation of a command it is given, about 0.1 s for all of them in a
   * fresh JVM, which a one-shot command should not pay), else with all of them (help, a usage
   * error with suggestions, no command at all).
   */
  public static CommandLine commandLine(String... args) {
    CommandLine cl = new CommandLine(new SssCommand());
    String named = commandNamed(args);
    for (Class<?> c : BUILT_IN) {
      String name = c.getAnnotation(Command.class).name();
      if (named == null || named.equals(name)) {
        cl.addSubcommand(name, c);
      }
    }
    for (CommandExtension ext : ServiceLoader.load(CommandExtension.class)) {
      if (named == null || named.equals(ext.name())) {
        cl.addSubcommand(ext.name(), ext.command());
      }
    }
    if (cl.getSubcommands().isEmpty()) { // no such command: picocli's error lists the real ones
      return commandLine();
    }
    for (List<String> path : WITHOUT_CLUSTER_FILE) {
      CommandLine sub = cl;
      for (String name : path) {
        sub = sub == null ? null : sub.getSubcommands().get(name);
      }
      if (sub == null) {
        continue;
      }
      CommandLine.Model.OptionSpec inherited = sub.getCommandSpec().findOption("--cluster");
      if (inherited != null) {
        sub.getCommandSpec().remove(inherited);
      }
    }
    cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
      String message = e instanceof FileSystemException f ? describe(f)
          : e.getMessage() == null ? e.toString() : e.getMessage();
      Throwable atStart = StartInParallel.failure();
      if (atStart != null && causedBy(e, t -> t instanceof LinkageError)) {
        message += " (at the command's start: " + atStart + ")";
        e.addSuppressed(atStart);
      }
      if (userCodeFailed(e)) {
        // the message is the user's own stack trace, and where it ran: that is what they need, whole
        cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + message);
      } else {
        cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + message.lines().findFirst().orElse(message));
      }
      if (Boolean.getBoolean("sss.debug")) {
        e.printStackTrace(cmd.getErr());
      }
      return 1;
    });
    cl.setParameterExceptionHandler((e, given) -> {
      CommandLine cmd = e.getCommandLine();
      cmd.getErr().println(cmd.getCommandSpec().qualifiedName() + ": " + e.getMessage()
          + " (see " + cmd.getCommandSpec().qualifiedName() + " --help)");
      return 2;
    });
    return cl;
  }

  /**
   * The first argument that is not one of this command's options (or an option's value): the
   * command to run; null when there is none, or when it is {@code help}, or when the root's own
   * help or version (or {@code --}) comes first: those list every command.
   */
  static String commandNamed(String... args) {
    for (int i = 0; i < args.length; i++) {
      String a = args[i];
      if (a.startsWith("-")) {
        if (OPTIONS_WITH_VALUES.contains(a)) {
          i++; // its value
        } else if (!a.startsWith("--cluster=") && !a.startsWith("--nodes=")) {
          return null; // --, help or version: the root's usage lists every command
        }
        continue;
      }
      return a.equals("help") ? null : a;
    }
    return null;
  }

  public static void main(String[] args) throws InterruptedException {
    boolean clusterFile = Arrays.stream(args).anyMatch(a -> a.equals("--cluster") || a.startsWith("--cluster="));
    Thread start = commandNamed(args) != null ? StartInParallel.begin(!clusterFile) : null;
    int status;
    try {
      status = commandLine(args).execute(args);
    } catch (LinkageError e) { // not an exception picocli handles: the JVM prints it, with this
      if (StartInParallel.failure() != null) {
        e.addSuppressed(StartInParallel.failure());
      }
      throw e;
    }
    if (start != null) {
      start.join();
    }
    ClientTransport.stop(); // its work done: the JVM's exit would wait for the loops otherwise
    System.exit(status);
  }
}
