package org.sss.server.membership;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Arrays;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.sss.core.proto.ViewChange;

/**
 * Signs and checks the view changes written to the members' log: an entry is a change followed
 * by an HMAC-SHA256 of it under the cluster secret. Raft's own port takes requests from anyone
 * who reaches it; a change without the secret's signature is applied as nothing.
 */
final class SignedChanges {
  private static final int MAC_BYTES = 32;
  private final SecretKeySpec key;

  SignedChanges(String secret) {
    // a cluster without a secret listens on loopback only; its entries are signed with the empty key's stand-in
    byte[] k = ("sss-membership:" + secret).getBytes(StandardCharsets.UTF_8);
    this.key = new SecretKeySpec(k, "HmacSHA256");
  }

  byte[] sign(ViewChange change) {
    byte[] body = change.toByteArray();
    byte[] mac = mac(body);
    byte[] out = Arrays.copyOf(body, body.length + MAC_BYTES);
    System.arraycopy(mac, 0, out, body.length, MAC_BYTES);
    return out;
  }

  /** The change in {@code entry}, or null when it is not signed with this cluster's secret. */
  ViewChange open(byte[] entry) {
    if (entry.length < MAC_BYTES) {
      return null;
    }
    byte[] body = Arrays.copyOf(entry, entry.length - MAC_BYTES);
    byte[] mac = Arrays.copyOfRange(entry, entry.length - MAC_BYTES, entry.length);
    if (!MessageDigest.isEqual(mac, mac(body))) {
      return null;
    }
    try {
      return ViewChange.parseFrom(body);
    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
      return null;
    }
  }

  byte[] mac(byte[] body) {
    try {
      Mac m = Mac.getInstance("HmacSHA256");
      m.init(key);
      return m.doFinal(body);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is not available", e);
    }
  }
}
