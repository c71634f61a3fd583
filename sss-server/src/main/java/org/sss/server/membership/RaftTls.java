package org.sss.server.membership;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;
import org.apache.ratis.conf.Parameters;
import org.apache.ratis.grpc.GrpcConfigKeys;
import org.apache.ratis.grpc.GrpcTlsConfig;
import org.apache.ratis.security.TlsConf.CertificatesConf;
import org.apache.ratis.security.TlsConf.PrivateKeyConf;
import org.apache.ratis.thirdparty.io.netty.handler.ssl.SslProvider;
import org.sss.core.cluster.ClusterSpec;

/**
 * Mutual TLS for the members' Raft traffic, in a cluster whose nodes speak TLS.
 *
 * <h2>Why</h2>
 * Raft's ports take Ratis's administration requests from anyone who reaches them: removing a
 * member's group deletes its log, and changing who votes takes the decisions away. Signing each
 * entry of the log (the cluster secret) keeps a stranger from deciding, not from breaking the
 * members. With {@code tls=true} every Raft connection, each way, shows a certificate that the
 * cluster's {@code tls.trust} vouches for: the node's own ({@code tls.cert}, {@code tls.key}),
 * as a client as well as a server. A stranger without such a certificate gets no request
 * through, and the traffic is encrypted.
 *
 * <p>Certificates are checked as SSS's own connections check them: trusted through
 * {@code tls.trust}, without matching the host name a node was reached at (gRPC would otherwise
 * ask it of every peer, and a node certificate made for {@code localhost} would keep the
 * members of a loopback cluster from ever meeting). The trust names the cluster's own
 * certificates or authority, not the public ones.
 */
final class RaftTls {
  private RaftTls() {}

  /** Ratis's parameters for the members of {@code spec}, or null when the cluster does not speak TLS. */
  static Parameters parameters(ClusterSpec spec, Path cert, Path key) {
    if (!spec.tls()) {
      return null;
    }
    if (cert == null || key == null) {
      throw new IllegalArgumentException("tls=true: the membership (Raft) needs the node's tls.cert and tls.key");
    }
    X509TrustManager trusted = trusted(Path.of(spec.tlsTrust()));
    checkTakenAsClient(trusted, cert, spec.tlsTrust());
    return parameters(trusted, cert, key);
  }

  /**
   * Ratis's parameters for TLS trusting {@code trusted} and showing {@code cert} (mutual TLS), or
   * no certificate when {@code cert} is null; unchecked (a test's stranger is built with it).
   */
  static Parameters parameters(X509TrustManager trusted, Path cert, Path key) {
    GrpcTlsConfig.Builder conf = GrpcTlsConfig.newBuilder()
        .setTrustManager(new TrustedWithoutHostNames(trusted))
        .setMutualTls(cert != null)
        .setSslProvider(SslProvider.JDK);
    if (cert != null) {
      conf.setPrivateKey(new PrivateKeyConf(key.toFile())).setKeyCertificates(new CertificatesConf(cert.toFile()));
    }
    Parameters p = new Parameters();
    GrpcConfigKeys.TLS.setConf(p, conf.build());
    return p;
  }

  /**
   * Refuses a node certificate that its peers would not take from it as a client: Raft's mutual
   * TLS has every node show its certificate to the others, and a certificate made for servers
   * only (an extended key usage without {@code clientAuth}), or signed by an authority that
   * {@code tls.trust} does not hold, would keep the members from ever meeting, with nothing
   * but TLS errors deep in Raft's log to say why.
   */
  static void checkTakenAsClient(X509TrustManager trusted, Path cert, String trust) {
    List<X509Certificate> chain = certificates(cert, "tls.cert");
    try {
      X509Certificate[] certs = chain.toArray(new X509Certificate[0]);
      trusted.checkClientTrusted(certs, chain.get(0).getPublicKey().getAlgorithm());
      trusted.checkServerTrusted(certs, "UNKNOWN"); // what TLS 1.3 asks: a server's signature
    } catch (CertificateException e) {
      throw new IllegalArgumentException("tls.cert " + cert + " is not taken by tls.trust " + trust + " as both a"
          + " client's and a server's certificate (" + e.getMessage() + "); the membership (Raft) needs both: every"
          + " node shows its own to its peers, so a node's certificate must allow client and server authentication"
          + " (no extended key usage, or one with clientAuth and serverAuth; a key usage, if any, with"
          + " digitalSignature), be valid now, and one signed by an authority needs the authority in tls.trust", e);
    }
  }

  /** The CERTIFICATE blocks of a PEM file (other blocks, a key say, are skipped, as Netty's reader does). */
  static List<X509Certificate> certificates(Path pem, String setting) {
    try {
      Matcher blocks = CERTIFICATE.matcher(Files.readString(pem, StandardCharsets.ISO_8859_1));
      StringBuilder only = new StringBuilder();
      while (blocks.find()) {
        only.append(blocks.group()).append('\n');
      }
      List<X509Certificate> certs = new ArrayList<>();
      try (InputStream in = new ByteArrayInputStream(only.toString().getBytes(StandardCharsets.ISO_8859_1))) {
        for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
          certs.add((X509Certificate) c);
        }
      }
      if (certs.isEmpty()) {
        throw new IllegalArgumentException(setting + " " + pem + " holds no certificate");
      }
      return certs;
    } catch (IOException | CertificateException e) {
      throw new IllegalArgumentException("cannot load " + setting + " " + pem + ": " + e.getMessage(), e);
    }
  }

  private static final Pattern CERTIFICATE =
      Pattern.compile("-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----", Pattern.DOTALL);

  /** A trust manager of the certificates in the PEM file {@code trust}. */
  static X509TrustManager trusted(Path trust) {
    List<X509Certificate> certs = certificates(trust, "tls.trust");
    try {
      KeyStore store = KeyStore.getInstance(KeyStore.getDefaultType());
      store.load(null, null);
      int i = 0;
      for (Certificate c : certs) {
        store.setCertificateEntry("trusted-" + i++, c);
      }
      TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
      f.init(store);
      for (TrustManager m : f.getTrustManagers()) {
        if (m instanceof X509TrustManager x) {
          return x;
        }
      }
      throw new IllegalStateException("no X.509 trust manager in this JVM");
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalArgumentException("cannot load tls.trust " + trust + ": " + e.getMessage(), e);
    }
  }

  /** Checks a peer's chain against the trusted certificates, whatever host name it was reached by. */
  static final class TrustedWithoutHostNames extends X509ExtendedTrustManager {
    private final X509TrustManager trusted;

    TrustedWithoutHostNames(X509TrustManager trusted) {
      this.trusted = trusted;
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      trusted.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
      trusted.checkServerTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      trusted.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
        throws CertificateException {
      trusted.checkServerTrusted(chain, authType);
    }

    @Override
    public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      trusted.checkClientTrusted(chain, authType);
    }

    @Override
    public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
        throws CertificateException {
      trusted.checkServerTrusted(chain, authType);
    }

    @Override
    public X509Certificate[] getAcceptedIssuers() {
      return trusted.getAcceptedIssuers();
    }
  }
}
