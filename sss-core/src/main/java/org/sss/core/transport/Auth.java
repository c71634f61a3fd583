package org.sss.core.transport;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Challenge-response authentication with the cluster secret. The secret never crosses the
 * wire: the server sends a random nonce, the client answers
 * {@code HMAC-SHA256(secret, serverNonce ‖ clientNonce)}, and the server compares in constant
 * time. Until that check passes a connection gets nothing but the challenge.
 */
public final class Auth {
  public static final int NONCE_BYTES = 32;
  private static final SecureRandom RANDOM = new SecureRandom();

  private Auth() {}

  public static byte[] nonce() {
    byte[] n = new byte[NONCE_BYTES];
    RANDOM.nextBytes(n);
    return n;
  }

  /** The proof that a peer knows {@code secret}. */
  public static byte[] mac(String secret, byte[] serverNonce, byte[] clientNonce) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      // A fixed prefix keeps the key non-empty when a loopback cluster runs without a secret.
      mac.init(new SecretKeySpec(("sss-v1:" + secret).getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
      mac.update(serverNonce);
      mac.update(clientNonce);
      return mac.doFinal();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 unavailable", e);
    }
  }

  /**
   * The server's proof that it knows {@code secret}: the client's nonce first and a label of its
   * own, so that a client's proof can never be replayed as a server's.
   */
  public static byte[] serverProof(String secret, byte[] serverNonce, byte[] clientNonce) {
    return mac(secret, concat("server".getBytes(StandardCharsets.UTF_8), clientNonce), serverNonce);
  }

  /** Constant-time check of a server's proof. */
  public static boolean verifyServer(String secret, byte[] serverNonce, byte[] clientNonce, byte[] proof) {
    return MessageDigest.isEqual(serverProof(secret, serverNonce, clientNonce), proof);
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] out = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, out, a.length, b.length);
    return out;
  }

  /** Constant-time check of a peer's proof. */
  public static boolean verify(String secret, byte[] serverNonce, byte[] clientNonce, byte[] proof) {
    return MessageDigest.isEqual(mac(secret, serverNonce, clientNonce), proof);
  }

  /** A new random secret (32 bytes, hex), for clusters created on this machine. */
  public static String randomSecret() {
    return HexFormat.of().formatHex(nonce());
  }
}
