package org.sss.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class AuthTest {
  private final byte[] server = Auth.nonce();
  private final byte[] client = Auth.nonce();

  @Test
  void nonce_isFreshAndOfFixedSize() {
    assertEquals(Auth.NONCE_BYTES, server.length);
    assertFalse(Arrays.equals(server, client));
    assertFalse(Arrays.equals(Auth.nonce(), Auth.nonce()));
  }

  @Test
  void mac_isDeterministicHmacSha256() {
    byte[] mac = Auth.mac("secret", server, client);
    assertEquals(32, mac.length);
    assertArrayEquals(mac, Auth.mac("secret", server.clone(), client.clone()));
  }

  @Test
  void verify_trueWithSameSecret() {
    assertTrue(Auth.verify("secret", server, client, Auth.mac("secret", server, client)));
  }

  @Test
  void verify_falseWithDifferentSecret() {
    byte[] proof = Auth.mac("secret", server, client);
    assertFalse(Auth.verify("Secret", server, client, proof));
    assertFalse(Auth.verify("secret ", server, client, proof));
    assertFalse(Auth.verify("", server, client, proof));
  }

  @Test
  void verify_falseWithDifferentServerNonce() {
    byte[] proof = Auth.mac("secret", server, client);
    byte[] other = server.clone();
    other[0] ^= 1;
    assertFalse(Auth.verify("secret", other, client, proof));
  }

  @Test
  void verify_falseWithDifferentClientNonce() {
    byte[] proof = Auth.mac("secret", server, client);
    byte[] other = client.clone();
    other[Auth.NONCE_BYTES - 1] ^= (byte) 0x80;
    assertFalse(Auth.verify("secret", server, other, proof));
  }

  @Test
  void verify_falseWhenNoncesSwapped() {
    assertFalse(Auth.verify("secret", client, server, Auth.mac("secret", server, client)));
  }

  @Test
  void verify_falseForTruncatedOrEmptyProof() {
    byte[] proof = Auth.mac("secret", server, client);
    assertFalse(Auth.verify("secret", server, client, Arrays.copyOf(proof, 16)));
    assertFalse(Auth.verify("secret", server, client, new byte[0]));
  }

  @Test
  void mac_emptySecretWorks() {
    byte[] proof = Auth.mac("", server, client);
    assertEquals(32, proof.length);
    assertTrue(Auth.verify("", server, client, proof));
    assertFalse(Auth.verify("x", server, client, proof));
  }

  @Test
  void mac_nonAsciiSecretWorks() {
    byte[] proof = Auth.mac("geheim-ß-秘密", server, client);
    assertTrue(Auth.verify("geheim-ß-秘密", server, client, proof));
    assertFalse(Auth.verify("geheim-ss-秘密", server, client, proof));
  }
}
