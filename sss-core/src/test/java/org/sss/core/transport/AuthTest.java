package org.sss.core.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
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

  /** 0x00, 0x01, ... : {@code n} bytes counting up from {@code first}. */
  private static byte[] counting(int first, int n) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (first + i);
    }
    return b;
  }

  /**
   * Known answers, computed outside this code base with OpenSSL: the key is the UTF-8 bytes of
   * {@code "sss-v1:" + secret}, the message the server nonce (bytes 0x00..0x1f) followed by the
   * client nonce (0x20..0x3f), e.g. for secret "secret":
   * <pre>
   * python3 -c "import sys; sys.stdout.buffer.write(bytes(range(64)))" \
   *   | openssl dgst -sha256 -mac HMAC -macopt hexkey:$(printf 'sss-v1:secret' | xxd -p)
   * </pre>
   */
  @Test
  void mac_knownAnswers() {
    byte[] serverNonce = counting(0x00, Auth.NONCE_BYTES);
    byte[] clientNonce = counting(0x20, Auth.NONCE_BYTES);
    HexFormat hex = HexFormat.of();
    assertEquals("2506b038d9ce7ad47f55ed7583a6c4e932cb482604a72d405cb636590a6344db",
        hex.formatHex(Auth.mac("secret", serverNonce, clientNonce)));
    assertEquals("28ef90a9a11f7ff9ba72adac907b0aad47656bc7b7d92792006e48140af9eeeb",
        hex.formatHex(Auth.mac("", serverNonce, clientNonce)));
    // key bytes 7373732d76313a 67656865696d 2d c39f 2d e7a798 e5af86: the secret in UTF-8
    assertEquals("598229d4dcb363fd926fb3664676be5efa8e737ea2bedb6905225fe6575d69cd",
        hex.formatHex(Auth.mac("geheim-\u00df-\u79d8\u5bc6", serverNonce, clientNonce)));
    assertTrue(Auth.verify("secret", serverNonce, clientNonce,
        hex.parseHex("2506b038d9ce7ad47f55ed7583a6c4e932cb482604a72d405cb636590a6344db")));
  }

  /**
   * The server's proof, computed with OpenSSL likewise: the message is "server", the client
   * nonce (0x20..0x3f), then the server nonce (0x00..0x1f).
   */
  @Test
  void serverProof_knownAnswer_andNotTheClientsProof() {
    byte[] serverNonce = counting(0x00, Auth.NONCE_BYTES);
    byte[] clientNonce = counting(0x20, Auth.NONCE_BYTES);
    byte[] proof = Auth.serverProof("secret", serverNonce, clientNonce);
    assertEquals("1daafc98a398051011616e9363c1a43b33300a88917e6996bc12fc44a167e6d1", HexFormat.of().formatHex(proof));
    assertTrue(Auth.verifyServer("secret", serverNonce, clientNonce, proof));
    assertFalse(Auth.verifyServer("secret", serverNonce, clientNonce, Auth.mac("secret", serverNonce, clientNonce)),
        "a client's proof replayed is not a server's");
  }

  /** The JDK's HmacSHA256 itself, against RFC 4231 test case 2 (key "Jefe"). */
  @Test
  void hmacSha256_rfc4231TestCase2() throws Exception {
    javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
    mac.init(new javax.crypto.spec.SecretKeySpec("Jefe".getBytes(StandardCharsets.US_ASCII), "HmacSHA256"));
    assertEquals("5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        HexFormat.of().formatHex(mac.doFinal("what do ya want for nothing?".getBytes(StandardCharsets.US_ASCII))));
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
