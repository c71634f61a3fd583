package org.sss.core.transport;

import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import java.io.File;
import javax.net.ssl.SSLException;
import org.sss.core.cluster.ClusterSpec;

/** The client side of TLS, for clients and for servers talking to their peers. */
public final class Tls {
  private Tls() {}

  /** The client TLS context a cluster asks for, or null when it does not use TLS. */
  public static SslContext clientContext(ClusterSpec spec) {
    if (!spec.tls()) {
      return null;
    }
    if (spec.tlsTrust() == null || spec.tlsTrust().isBlank()) {
      throw new IllegalArgumentException("tls=true needs tls.trust (the PEM certificate to trust) in the cluster file");
    }
    try {
      return SslContextBuilder.forClient().trustManager(new File(spec.tlsTrust())).build();
    } catch (SSLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("cannot load tls.trust " + spec.tlsTrust() + ": " + e.getMessage(), e);
    }
  }
}
