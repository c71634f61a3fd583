package org.sss.client.internal;

import java.util.Objects;
import org.sss.client.BulkWriter;
import org.sss.client.SssClient;
import org.sss.core.proto.ViewAnswer;

/**
 * What an {@link SssClient} holds that only the engine's own code may use: its connections to
 * the nodes, for the job coordinator's requests and for tools that check what each node stores,
 * and the membership as the wire carries it (a job's stages are sent the view itself). Kept out
 * of {@code SssClient}'s methods so that its public API speaks only the client's own types.
 *
 * <p>Internal: no compatibility promise; it may change with any release.
 */
public final class ClientInternals {
  /** What the client lends this class; installed once, by {@link SssClient}'s class initializer. */
  public interface Access {
    NodeChannels channels(SssClient client);

    ViewAnswer view(SssClient client);

    int batchesInFlight(BulkWriter writer);
  }

  private static volatile Access access;

  private ClientInternals() {}

  /** Called by {@link SssClient} only; a second call is refused. */
  public static synchronized void install(Access a) {
    if (access != null) {
      throw new IllegalStateException("client internals are installed already");
    }
    access = Objects.requireNonNull(a, "access");
  }

  /** The client's connection to each node, opened on first use; closed with the client. */
  public static NodeChannels channels(SssClient client) {
    return access(client).channels(client);
  }

  /** The membership the nodes decided, as the wire carries it (see {@link SssClient#view()}). */
  public static ViewAnswer view(SssClient client) {
    return access(client).view(client);
  }

  /** The batches a bulk writer has sent and not yet had answered (a drill kills a node only when none is). */
  public static int batchesInFlight(BulkWriter writer) {
    Objects.requireNonNull(writer, "writer"); // made by a client: its class initializer installed the access
    return access.batchesInFlight(writer);
  }

  private static Access access(SssClient client) {
    Objects.requireNonNull(client, "client"); // a client exists: its class initializer installed the access
    return access;
  }
}
