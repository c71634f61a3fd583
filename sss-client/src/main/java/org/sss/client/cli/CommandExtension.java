package org.sss.client.cli;

/**
 * A subcommand contributed by another module (the benchmark, the examples, the server), found
 * with {@link java.util.ServiceLoader} so that the command line does not link those modules.
 */
public interface CommandExtension {
  /** The subcommand's name, e.g. {@code bench}. */
  String name();

  /** A picocli command object (annotated with {@code @Command}). */
  Object command();
}
